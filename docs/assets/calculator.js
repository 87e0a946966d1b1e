/* The "will it fit?" calculator (generator/site/pages/calculator/). Every figure comes from
   the data the render writes: data/calculator.js (the models, their settings, the GPUs; the
   same data as calculator.json, as a script so that the widget also works from a page opened
   as a file), data/calculator/model-<model>.js (one model's fits, loaded when it is picked)
   and data/calculator/<fit>.js (one setting's replay templates, loaded when it is picked),
   replayed through caching-allocator.js with each GPU's cuBLAS workspaces. Whether a GPU
   fits and the largest batch that does come from planning.js, the copy of the one fit rule
   and the one search. The words come from the widget's own markup, in the page's language.
   The computations mirror generator/plan/predictor/planes.py, replay.py and
   verdicts.py; tests compare them. The constants they share with the Python (the replay's
   monomials, the search's bounds, the input limits) come in the data too ("constants",
   calculator.widget_constants): this file keeps no copy. The reader's choices live in the
   address (?model=…), so that a link gives the same answer. */
(function () {
  "use strict";

  var GIB = Math.pow(2, 30);
  var FIELDS = ["model", "method", "precision", "levers", "batch", "seq", "gpu", "gpu_memory"];

  function predict(c, batch, seq) {
    var plane = c.fixed + c.per_token * batch * seq + c.per_token_sq * batch * seq * seq;
    return Math.max(plane, c.floor === undefined ? -Infinity : c.floor);
  }

  // replay.term: a monomial's value, from its powers of batch and sequence (the data's
  // constants.monomials, replay.MONOMIALS).
  function term(powers, batch, seq) {
    var value = 1, i;
    for (i = 0; i < powers[0]; i++) value *= batch;
    for (i = 0; i < powers[1]; i++) value *= seq;
    return value;
  }

  // replay.events_at: each allocation's fitted size at this size (a GPU's own cuBLAS
  // workspace where it has one), the frees as they are, then trace.decode: frees counted back
  // from the newest allocation become absolute. Also which allocations are workspaces.
  function eventsAt(t, batch, seq, workspace, monomials) {
    var terms = t.monomials.map(function (m) { return term(monomials[m], batch, seq); });
    var nbytes = t.sizes.map(function (c) {
      var sum = 0;
      for (var i = 0; i < c.length; i++) sum += c[i] * terms[i];
      return Math.max(0, Math.floor(sum + 0.5));
    });
    if (workspace !== undefined && t.workspace !== undefined) nbytes[t.workspace] = workspace;
    var events = [], workspaces = [], allocations = 0;
    t.steps.forEach(function (text, k) {
      var ops = text ? text.split(",").map(Number) : [];
      for (var n = 0; n < t.times[k]; n++) {
        for (var j = 0; j < ops.length; j++) {
          var v = ops[j];
          if (v >= 0) {
            if (v === t.workspace) workspaces.push(allocations);
            events.push(nbytes[v]);
            allocations++;
          } else events.push(-(allocations + v) - 1);
        }
      }
    });
    events.workspaces = workspaces;
    return events;
  }

  // replay.tensors_peak: the most bytes the step's tensors ask for at once, the cuBLAS
  // workspaces and the allocator's rounding aside.
  function tensorsPeak(events) {
    var skip = {}, sizes = [], live = 0, peak = 0;
    events.workspaces.forEach(function (i) { skip[i] = true; });
    events.forEach(function (v) {
      if (v >= 0) {
        var size = skip[sizes.length] ? 0 : v;
        sizes.push(size);
        live += size;
        if (live > peak) peak = live;
      } else live -= sizes[-v - 1];
    });
    return peak;
  }

  // verdicts.Predictor.template: the template whose batches hold this micro-batch.
  function templateFor(fit, templates, batch) {
    var found = null;
    (fit.replays || []).forEach(function (entry) {
      var low = entry.batch[0], high = entry.batch[1];
      if (!found && low <= batch && (high === null || batch <= high) && templates[entry.name]) {
        found = templates[entry.name];
      }
    });
    return found;
  }

  // verdicts.Predictor: one setting's (allocated, reserved) at any size, on any GPU's
  // workspaces, each replayed at most once; a setting of micro-batches replays its template
  // at the estimates' own batch (micro-batch × micro-batches). constants: the data's.
  function predictor(fit, templates, constants) {
    var seen = {};
    return {
      constants: constants,
      peaks: function (batch, seq, workspace) {
        var key = batch + "x" + seq + "x" + workspace;
        if (!(key in seen)) {
          var t = templateFor(fit, templates || {}, batch);
          if (t) {
            var events = eventsAt(t, batch * fit.micro_batches, seq, workspace,
              constants.monomials);
            var p = window.replayPeaks(events);
            seen[key] = [p.allocated, p.reserved, tensorsPeak(events)];
          } else {
            seen[key] = [predict(fit.allocated, batch, seq), predict(fit.reserved, batch, seq),
              null];
          }
        }
        return seen[key];
      },
      replayed: function (batch) { return !!templateFor(fit, templates || {}, batch); }
    };
  }

  // verdicts.in_range: inside both intervals the warning names (batch × sequence, and the
  // sequence), whether or not a template holds the batch: the line on what the figures are
  // (replayed, or planes) says that.
  function inRange(fit, batch, seq) {
    var t = batch * seq, r = fit.range;
    return r.tokens[0] <= t && t <= r.tokens[1] && r.seq[0] <= seq && seq <= r.seq[1];
  }

  // verdicts.verdict: the one rule (planning.judge) on this GPU's figures.
  function verdict(pred, gpu, batch, seq) {
    var peaks = pred.peaks(batch, seq, gpu.workspace_bytes);
    return window.planning.judge(gpu.memory_bytes, peaks[0], peaks[1], gpu.context_bytes);
  }

  // verdicts.largest_batch: the one search (planning.largestFitting) over what the rule needs.
  function largestBatch(pred, gpu, seq) {
    return window.planning.largestFitting(function (b) {
      return verdict(pred, gpu, b, seq).needed;
    }, gpu.memory_bytes, pred.constants.search).largest;
  }

  // verdicts.composition, what fills the peak: each category's plane where the step's peak
  // grows with its size, the optimizer step's split where it does not; shares of it.
  function composition(fit, batch, seq, categories) {
    var c = fit.composition || {}, parts = null;
    var growing = fit.allocated.floor === 0
      || predict({fixed: fit.allocated.fixed, per_token: fit.allocated.per_token,
        per_token_sq: fit.allocated.per_token_sq}, batch, seq) >= fit.allocated.floor;
    if (growing && c.planes) {
      parts = categories.map(function (cat) { return Math.max(0, predict(c.planes[cat], batch, seq)); });
    } else if (c.floor) {
      parts = categories.map(function (cat) { return c.floor[cat] || 0; });
    }
    if (!parts) return null;
    var total = parts.reduce(function (a, b) { return a + b; }, 0);
    return total > 0 ? parts.map(function (p) { return p / total; }) : null;
  }

  function fill(text, values) {
    return text.replace(/\{(\w+)\}/g, function (all, name) {
      return name in values ? String(values[name]) : all;
    });
  }

  function el(tag, attrs, text) {
    var node = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (k) { node.setAttribute(k, attrs[k]); });
    if (text !== undefined) node.textContent = text;
    return node;
  }

  function number(value, lang, digits) {
    return value.toLocaleString(lang === "zh" ? "zh-CN" : "en-US",
      {minimumFractionDigits: digits, maximumFractionDigits: digits});
  }

  function gib(bytes, lang) { return number(bytes / GIB, lang, 2); }

  function figure(list, label, bytes, words, lang, name) {
    list.appendChild(el("dt", {}, label));
    var dd = el("dd", {"class": "calc-" + name, "data-figure": name, "data-bytes": String(bytes)});
    dd.textContent = gib(bytes, lang) + " " + words.unit;
    list.appendChild(dd);
    return dd;
  }

  // A script of the data folder, loaded once; `then` runs when it is there (again for each
  // caller while it loads), `failed` if it cannot load.
  var loading = {};
  function load(widget, file, then, failed) {
    var src = widget.querySelector("a.calc-data").href.replace(/calculator\.json$/, file);
    if (loading[src] === "done") { then(); return; }
    if (loading[src]) { loading[src].push([then, failed]); return; }
    loading[src] = [[then, failed]];
    var script = document.createElement("script");
    script.src = src;
    script.onload = function () {
      var waiting = loading[src];
      loading[src] = "done";
      waiting.forEach(function (w) { w[0](); });
    };
    script.onerror = function () {
      var waiting = loading[src];
      delete loading[src];
      waiting.forEach(function (w) { w[1](); });
    };
    document.head.appendChild(script);
  }

  function modelOf(data, id) {
    return data.models.filter(function (m) { return m.id === id; })[0] || data.models[0];
  }

  // The choices offered follow one another: a model's methods, that method's precisions,
  // their lever sets; a choice that is not offered any more falls back on the first.
  function setOptions(select, values, label, keep) {
    var current = keep !== undefined ? keep : select.value;
    var same = select.options.length === values.length && values.every(function (v, i) {
      return select.options[i].value === v;
    });
    if (!same) {
      select.textContent = "";
      values.forEach(function (v) { select.appendChild(el("option", {value: v}, label(v))); });
    }
    select.value = values.indexOf(current) >= 0 ? current : values[0];
  }

  function unique(list) {
    return list.filter(function (v, i) { return list.indexOf(v) === i; });
  }

  function syncChoices(form, data, lang, keep) {
    keep = keep || {};
    var model = modelOf(data, form.model.value);
    var settings = model.settings;
    setOptions(form.method, unique(settings.map(function (s) { return s.method; })),
      function (m) { return data.methods[m][lang]; }, keep.method);
    settings = settings.filter(function (s) { return s.method === form.method.value; });
    setOptions(form.precision, unique(settings.map(function (s) { return s.precision; })),
      function (p) { return data.precisions[form.method.value][p][lang]; }, keep.precision);
    settings = settings.filter(function (s) { return s.precision === form.precision.value; });
    var words = {};
    settings.forEach(function (s) { words[s.levers] = s.lever_words[lang]; });
    setOptions(form.levers, settings.map(function (s) { return s.levers; }),
      function (l) { return words[l]; }, keep.levers);
    return settings.filter(function (s) { return s.levers === form.levers.value; })[0];
  }

  // A whole number from 1 to `limit`, or a reason it is not: never NaN further on.
  function wholeNumber(text, limit) {
    var t = String(text).trim();
    if (t === "") return {problem: "empty"};
    if (!/^[0-9]+$/.test(t)) return {problem: /^-/.test(t) ? "negative" : "whole"};
    var n = Number(t);
    if (n < 1) return {problem: "zero"};
    if (n > limit) return {problem: "large"};
    return {value: n};
  }

  function memorySize(text, limit) {
    var t = String(text).trim();
    if (t === "") return {value: null};
    if (!/^[0-9]*\.?[0-9]+$/.test(t)) return {problem: /^-/.test(t) ? "negative" : "memory"};
    var n = Number(t);
    if (!(n > 0)) return {problem: "zero"};
    // The page prints a GPU's memory to 0.01 GiB: a smaller one would be "a GPU of 0.00 GiB"
    // (and below half a byte, a GPU of 0 bytes), so it is refused as zero is.
    if (Math.round(n * 100) < 1) return {problem: "small"};
    if (n > limit) return {problem: "large"};
    return {value: Math.round(n * GIB)};
  }

  function saveState(form) {
    if (!window.history || !window.history.replaceState) return;
    var params = new URLSearchParams(window.location.search);
    FIELDS.forEach(function (f) {
      if (form[f] && String(form[f].value) !== "") params.set(f, form[f].value);
      else params.delete(f);
    });
    try {
      window.history.replaceState(null, "", "?" + params.toString() + window.location.hash);
    } catch (e) { /* a page opened as a file may refuse: the widget works all the same */ }
  }

  function bar(shares, data, words, lang) {
    var box = el("div", {"class": "calc-bar-box"});
    var parts = [];
    var strip = el("div", {"class": "calc-bar", role: "img"});
    data.categories.forEach(function (cat, i) {
      if (!(shares[i] > 0.0005)) return;
      var name = data.category_words[cat][lang];
      var percent = number(100 * shares[i], lang, 0) + " %";
      parts.push(name + " " + percent);
      strip.appendChild(el("span", {"class": "calc-bar-part", "data-category": cat,
        style: "width:" + (100 * shares[i]).toFixed(2) + "%;background:" + data.category_colors[cat],
        title: name + ": " + percent}));
    });
    strip.setAttribute("aria-label", words.bar + ": " + parts.join(lang === "zh" ? "，" : ", "));
    box.appendChild(el("p", {"class": "calc-bar-title"}, words.bar));
    box.appendChild(strip);
    var legend = el("ul", {"class": "calc-legend", "aria-hidden": "true"});
    data.categories.forEach(function (cat, i) {
      if (!(shares[i] > 0.0005)) return;
      var item = el("li");
      item.appendChild(el("span", {"class": "calc-swatch", style: "background:" + data.category_colors[cat]}));
      item.appendChild(document.createTextNode(data.category_words[cat][lang] + " "
        + number(100 * shares[i], lang, 0) + " %"));
      legend.appendChild(item);
    });
    box.appendChild(legend);
    box.appendChild(el("p", {"class": "calc-bar-note"}, words.bar_note));
    return box;
  }

  function command(fit, model, batch, seq, gpu) {
    var parts = ["python -m generator estimate", model.id, "--batch-size", batch * fit.micro_batches,
      "--seq-len", seq, "--precision", fit.precision];
    if (fit.optimizer !== "adamw") parts.push("--optimizer", fit.optimizer);
    if (fit.levers.indexOf("ckpt") >= 0) parts.push("--checkpointing");
    if (fit.levers.indexOf("fused") >= 0) parts.push("--optimizer-impl fused");
    if (fit.micro_batches > 1) parts.push("--micro-batches", fit.micro_batches);
    if (fit.method !== "full") parts.push("--lora-rank", fit.lora_rank || 16);
    if (fit.method === "qlora") parts.push("--quantization nf4");
    if (fit.hf_task && fit.hf_task !== "auto") parts.push("--hf-task", fit.hf_task);
    parts.push('--gpu "' + gpu.short_name + '"');
    return parts.join(" ");
  }

  function say(out, cls, text) {
    out.textContent = "";
    out.appendChild(el("p", {"class": cls}, text));
  }

  function update(widget, data, words, keep) {
    var form = widget.querySelector(".calc-form");
    var out = widget.querySelector(".calc-result");
    var lang = widget.getAttribute("data-lang");
    var model = modelOf(data, form.model.value);
    var fits = (window.CALCULATOR_FITS || {})[model.id];
    if (!fits) {
      say(out, "calc-loading", words.loading);
      load(widget, "calculator/model-" + model.slug + ".js",
        function () { update(widget, data, words, keep); },
        function () { say(out, "calc-invalid", words.failed); });
      return;
    }
    var setting = syncChoices(form, data, lang, keep);
    saveState(form);
    var fit = setting && fits.filter(function (f) { return f.name === setting.name; })[0];
    if (!fit) { say(out, "calc-nofit", words.nofit); return; }
    var problems = [], limits = data.constants.limits;
    var batch = wholeNumber(form.batch.value, limits.batch);
    var seq = wholeNumber(form.seq.value, limits.seq);
    var memory = memorySize(form.gpu_memory.value, limits.gpu_memory);
    if (batch.problem) problems.push(fill(words.problems[batch.problem], {field: words.batch, limit: limits.batch}));
    if (seq.problem) problems.push(fill(words.problems[seq.problem], {field: words.seq, limit: limits.seq}));
    if (memory.problem) problems.push(fill(words.problems[memory.problem], {field: words.gpu_memory, limit: limits.gpu_memory}));
    if (problems.length) {
      out.textContent = "";
      problems.forEach(function (p) { out.appendChild(el("p", {"class": "calc-invalid", role: "alert"}, p)); });
      return;
    }
    batch = batch.value; seq = seq.value;
    var loaded = window.CALCULATOR_REPLAYS || {};
    var missing = (fit.replays || []).filter(function (e) { return !loaded[e.name]; });
    if (missing.length) {
      say(out, "calc-loading", words.loading);
      load(widget, "calculator/" + fit.name + ".js",
        function () { update(widget, data, words); },
        function () { say(out, "calc-invalid", words.failed); });
      return;
    }
    render(out, widget, data, words, lang, model, fit, batch, seq, memory.value);
  }

  function render(out, widget, data, words, lang, model, fit, batch, seq, memory) {
    var form = widget.querySelector(".calc-form");
    var pred = predictor(fit, window.CALCULATOR_REPLAYS || {}, data.constants);
    var r = fit.range;
    var chosen = data.gpus.filter(function (g) { return g.name === form.gpu.value; })[0] || data.gpus[0];
    var gpu = memory === null ? chosen : {name: "custom", short_name: chosen.short_name,
      memory_bytes: memory, context_bytes: chosen.context_bytes,
      workspace_bytes: chosen.workspace_bytes, smi_total_mib: Math.round(memory / 1048576)};
    out.textContent = "";
    if (!inRange(fit, batch, seq)) {
      out.appendChild(el("p", {"class": "calc-outside admonition warning", role: "status"},
        fill(words.outside, {t0: number(r.tokens[0], lang, 0), t1: number(r.tokens[1], lang, 0),
          s0: number(r.seq[0], lang, 0), s1: number(r.seq[1], lang, 0),
          command: command(fit, model, batch, seq, chosen)})));
    }
    // the estimates behind the figures: those of the template replayed (batch 1's own, or
    // the others'), or all the planes were fitted to
    var entry = (fit.replays || []).filter(function (e) {
      return e.batch[0] <= batch && (e.batch[1] === null || batch <= e.batch[1]);
    })[0];
    var behind = pred.replayed(batch) && entry ? fit.points.filter(function (p) {
      return p.batch >= entry.batch[0] && (entry.batch[1] === null || p.batch <= entry.batch[1]);
    }).length : fit.points.length;
    out.appendChild(el("p", {"class": "calc-kind"},
      fill(pred.replayed(batch) ? words.kind_replay : words.kind,
        {kind: fit.kind[lang], points: behind})));
    var peaks = pred.peaks(batch, seq, gpu.workspace_bytes), reserved = peaks[1];
    var list = el("dl", {"class": "calc-figures"});
    if (peaks[2] !== null) figure(list, words.tensors, peaks[2], words, lang, "tensors");
    figure(list, words.allocated, peaks[0], words, lang, "allocated");
    figure(list, words.reserved, reserved, words, lang, "reserved");
    var ctx = gpu.context_bytes;
    list.appendChild(el("dt", {}, fill(words.smi, {context: Math.round(ctx[0] / 1048576)
      + "–" + Math.round(ctx[1] / 1048576) + " MiB"})));
    list.appendChild(el("dd", {"class": "calc-smi", "data-figure": "smi",
      "data-bytes": (reserved + ctx[0]) + " " + (reserved + ctx[1])},
      gib(reserved + ctx[0], lang) + "–" + gib(reserved + ctx[1], lang) + " " + words.unit));
    var v = verdict(pred, gpu, batch, seq);
    list.appendChild(el("dt", {}, fill(words.verdict_on, {gpu: memory === null ? gpu.short_name
      : fill(words.custom, {size: number(memory / GIB, lang, 2)})})));
    list.appendChild(el("dd", {"class": "calc-verdict", "data-figure": "verdict",
      "data-verdict": v.word}, words.verdicts[v.word]));
    out.appendChild(list);
    var shares = composition(fit, batch, seq, data.categories);
    if (shares) out.appendChild(bar(shares, data, words, lang));
    out.appendChild(el("p", {"class": "calc-upper-bound"}, words.upper_bound));
    var table = el("table", {"class": "calc-cards"});
    table.appendChild(el("caption", {}, fill(words.caption, {seq: number(seq, lang, 0)})));
    var head = el("tr");
    [words.gpu, words.total, words.fits_head, words.largest_head].forEach(function (h) {
      head.appendChild(el("th", {scope: "col"}, h));
    });
    table.appendChild(el("thead")).appendChild(head);
    var body = table.appendChild(el("tbody"));
    var rows = memory === null ? data.gpus : [gpu].concat(data.gpus);
    rows.forEach(function (g) {
      var row = el("tr", {"data-gpu": g.name});
      var name = el("th", {scope: "row"});
      if (g.name === "custom") name.textContent = fill(words.custom, {size: number(g.memory_bytes / GIB, lang, 2)});
      else if (g.source.indexOf("http") !== 0) name.textContent = g.short_name;
      else name.appendChild(el("a", {href: g.source, title: words.source + ": " + g.source}, g.short_name));
      row.appendChild(name);
      row.appendChild(el("td", {}, gib(g.memory_bytes, lang) + " " + words.unit
        + " (" + number(g.smi_total_mib, lang, 0) + " MiB)"));
      var w = verdict(pred, g, batch, seq).word;
      row.appendChild(el("td", {"class": "calc-verdict", "data-verdict": w}, words.verdicts[w]));
      var most = largestBatch(pred, g, seq);
      var text = most ? number(most, lang, 0) : words.none;
      if (most && !inRange(fit, most, seq)) text = fill(words.beyond, {batch: number(most, lang, 0)});
      row.appendChild(el("td", {"class": "calc-largest", "data-batch": String(most)}, text));
      body.appendChild(row);
    });
    out.appendChild(table);
  }

  // The address's choices (?model=…&batch=…), where they are among those offered.
  function restore(form, data) {
    var params = new URLSearchParams(window.location.search);
    var keep = {};
    if (params.has("model") && data.models.some(function (m) { return m.id === params.get("model"); })) {
      form.model.value = params.get("model");
    }
    ["method", "precision", "levers"].forEach(function (f) { if (params.has(f)) keep[f] = params.get(f); });
    ["batch", "seq", "gpu_memory"].forEach(function (f) { if (params.has(f)) form[f].value = params.get(f); });
    if (params.has("gpu") && data.gpus.some(function (g) { return g.name === params.get("gpu"); })) {
      form.gpu.value = params.get("gpu");
    }
    return keep;
  }

  function start(widget, data) {
    var words = JSON.parse(widget.querySelector(".calc-words").textContent);
    var form = widget.querySelector(".calc-form");
    var keep = restore(form, data);
    form.addEventListener("submit", function (event) { event.preventDefault(); });
    form.addEventListener("input", function () { update(widget, data, words); });
    form.addEventListener("change", function () { update(widget, data, words); });
    update(widget, data, words, keep);
    widget.setAttribute("data-ready", "true");
  }

  function init() {
    var widgets = document.querySelectorAll(".calc");
    if (!widgets.length) return;
    var link = widgets[0].querySelector("a.calc-data");
    if (window.CALCULATOR_DATA) {
      widgets.forEach(function (w) { start(w, window.CALCULATOR_DATA); });
      return;
    }
    // The data's JSON is linked from the widget (mkdocs checks that link); its sibling
    // calculator.js holds the same data as a script, which loads from file:// as well.
    var script = document.createElement("script");
    script.src = link.href.replace(/\.json$/, ".js");
    script.onload = function () {
      widgets.forEach(function (w) { start(w, window.CALCULATOR_DATA); });
    };
    document.head.appendChild(script);
  }

  // The computations the widget shows, for the tests that hold them against verdicts.py.
  window.calculatorMirror = {term: term, eventsAt: eventsAt, predictor: predictor, verdict: verdict,
    largestBatch: largestBatch, inRange: inRange, tensorsPeak: tensorsPeak,
    composition: composition, wholeNumber: wholeNumber, memorySize: memorySize};

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", init);
  else init();
})();
