/* The answers the calculator gives, in the browser: the one rule for "does it fit"
   (generator/plan/fit.py, `judge`) and the one search for the largest batch that fits
   (generator/plan/search.py, `largest_fitting`), mirrored line for line;
   tests/unit/test_planning_js.py holds the two against each other on a grid. The search's
   bounds are search.py's own, which the render writes into the calculator's data
   (calculator.widget_constants: "search"); the caller passes them in. */
(function () {
  "use strict";

  // fit.needed_bytes: the reserved peak and the CUDA context at its high end (the tensors'
  // peak where no allocator was modelled: reserved null).
  function neededBytes(allocated, reserved, context) {
    return reserved === null ? allocated : reserved + context[1];
  }

  // fit.judge: yes, maybe, only just, no.
  function judge(memory, allocated, reserved, context) {
    var need = neededBytes(allocated, reserved, context);
    var word;
    if (reserved === null) word = need <= memory ? "yes" : "no";
    else if (allocated + context[0] > memory) word = "no";
    else if (need <= memory) word = "yes";
    else if (reserved + context[0] <= memory) word = "maybe";
    else word = "only just";
    return {word: word, fits: word === "yes", needed: need, spare: memory - need};
  }

  // search.largest_fitting: needed(b) is called once per batch; bounds: {max_batch,
  // max_growth}, search.py's MAX_BATCH and MAX_GROWTH.
  function largestFitting(needed, budget, bounds, first, step, limit) {
    first = first || 1; step = step || 1; limit = limit || bounds.max_batch;
    var search = {largest: 0, needed: [], capped: false}, seen = {};
    function need(k) {
      var b = k * step;
      if (!(b in seen)) { seen[b] = needed(b); search.needed.push([b, seen[b]]); }
      return seen[b];
    }
    function fits(k) { return need(k) <= budget; }
    var top = Math.max(1, Math.floor(limit / step));
    var start = Math.min(top, Math.max(1, Math.floor(first / step)));
    var low, high;
    if (fits(start)) {
      var grown = grow(need, fits, start, top, budget, bounds.max_growth);
      low = grown[0]; high = grown[1];
      if (high === null) { search.largest = top * step; search.capped = true; return search; }
    } else if (start === 1 || !fits(1)) {
      return search;
    } else {
      low = 1; high = start;
    }
    search.largest = narrow(need, fits, low, high, budget) * step;
    return search;
  }

  function along(room, span, rise) { return Math.floor(room * span / rise); }

  // search._grow: a guess on the line reaches at least `reach` batches, doubled with each
  // one that fits.
  function grow(need, fits, low, top, budget, maxGrowth) {
    var base = low, reach = 1;
    while (low < top) {
      var rise = need(low) - need(base), onLine = low > base && rise > 0, guess;
      if (onLine) {
        guess = Math.max(low + along(budget - need(low), low - base, rise), low + reach);
      } else guess = 2 * low;
      guess = Math.min(top, Math.max(low + 1, Math.min(guess, maxGrowth * low)));
      if (!fits(guess)) return [low, guess];
      if (onLine) reach *= 2;
      low = guess;
    }
    return [low, null];
  }

  function narrow(need, fits, low, high, budget) {
    var move = "line", last = low;
    while (high - low > 1) {
      var guess;
      if (move === "line") {
        var rise = need(high) - need(low);
        guess = rise > 0 ? low + along(budget - need(low), high - low, rise)
          : Math.floor((low + high) / 2);
        move = "beside";
      } else if (move === "beside") {
        guess = last === low ? last + 1 : last - 1;
        move = "middle";
      } else {
        guess = Math.floor((low + high) / 2); move = "line";
      }
      guess = Math.min(high - 1, Math.max(low + 1, guess));
      if (fits(guess)) low = guess; else high = guess;
      last = guess;
    }
    return low;
  }

  var planning = {judge: judge, neededBytes: neededBytes, largestFitting: largestFitting};
  if (typeof window !== "undefined") window.planning = planning;
  if (typeof module !== "undefined") module.exports = planning;
})();
