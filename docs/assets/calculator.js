/* The "will it fit?" calculator (generator/site/pages/calculator/). Every figure comes from
   the data the render writes to data/calculator.js (the same data as calculator.json, as a
   script so that the widget also works from a page opened as a file) and, for a lever set
   with a replay template, data/calculator/<fit>.js, replayed through caching-allocator.js
   with each GPU's cuBLAS workspaces; whether a GPU fits and the largest batch that does come
   from planning.js, the copy of the one fit rule and the one search. The words come from the
   widget's own markup, in the page's language. The computations mirror
   generator/site/pages/calculator/planes.py, replay.py and verdicts.py; a browser test
   compares them. */
(function () {
  "use strict";

  var TERMS = {"1": function () { return 1; }, "b": function (b) { return b; },
    "s": function (b, s) { return s; }, "b*s": function (b, s) { return b * s; },
    "s*s": function (b, s) { return s * s; }, "b*s*s": function (b, s) { return b * s * s; }};

  function predict(c, batch, seq) {
    var plane = c.fixed + c.per_token * batch * seq + c.per_token_sq * batch * seq * seq;
    return Math.max(plane, c.floor);
  }

  // replay.events_at: each allocation's fitted size at this size (a GPU's own cuBLAS
  // workspace where it has one), the frees as they are, then trace.decode: frees counted back
  // from the newest allocation become absolute.
  function eventsAt(t, batch, seq, workspace) {
    var terms = t.monomials.map(function (m) { return TERMS[m](batch, seq); });
    var nbytes = t.sizes.map(function (c) {
      var sum = 0;
      for (var i = 0; i < c.length; i++) sum += c[i] * terms[i];
      return Math.max(0, Math.floor(sum + 0.5));
    });
    if (workspace !== undefined && t.workspace !== undefined) nbytes[t.workspace] = workspace;
    var events = [], allocations = 0;
    t.steps.forEach(function (text, k) {
      var ops = text ? text.split(",").map(Number) : [];
      for (var n = 0; n < t.times[k]; n++) {
        for (var j = 0; j < ops.length; j++) {
          var v = ops[j];
          if (v >= 0) { events.push(nbytes[v]); allocations++; }
          else events.push(-(allocations + v) - 1);
        }
      }
    });
    return events;
  }

  // verdicts.Predictor: one lever set's (allocated, reserved) at any size, on any GPU's
  // workspaces, each replayed at most once.
  function predictor(fit, template) {
    var seen = {};
    return {
      peaks: function (batch, seq, workspace) {
        var key = batch + "x" + seq + "x" + workspace;
        if (!(key in seen)) {
          if (template) {
            var p = window.replayPeaks(eventsAt(template, batch, seq, workspace));
            seen[key] = [p.allocated, p.reserved];
          } else {
            seen[key] = [predict(fit.allocated, batch, seq), predict(fit.reserved, batch, seq)];
          }
        }
        return seen[key];
      }
    };
  }

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
    }, gpu.memory_bytes).largest;
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

  function gib(bytes, lang) {
    return (bytes / Math.pow(2, 30)).toLocaleString(lang === "zh" ? "zh-CN" : "en-US",
      {minimumFractionDigits: 2, maximumFractionDigits: 2});
  }

  function figure(list, label, bytes, words, lang, name) {
    list.appendChild(el("dt", {}, label));
    var dd = el("dd", {"class": "calc-" + name, "data-bytes": String(bytes)});
    dd.textContent = gib(bytes, lang) + " " + words.unit;
    list.appendChild(dd);
    return dd;
  }

  // A replay template is a script of its own (data/calculator/<fit>.js), fetched when its
  // lever set is first chosen; the widget updates again once it is there.
  function template(widget, fit, retry) {
    var loaded = window.CALCULATOR_REPLAYS || {};
    if (!fit.replay || loaded[fit.replay]) return fit.replay ? loaded[fit.replay] : null;
    var src = widget.querySelector("a.calc-data").href.replace(/calculator\.json$/,
      "calculator/" + fit.replay + ".js");
    if (!document.querySelector('script[src="' + src + '"]')) {
      var script = document.createElement("script");
      script.src = src;
      script.onload = retry;
      document.head.appendChild(script);
    }
    return undefined;
  }

  function update(widget, data, words) {
    var form = widget.querySelector(".calc-form");
    var out = widget.querySelector(".calc-result");
    var lang = widget.getAttribute("data-lang");
    var batch = Number(form.batch.value), seq = Number(form.seq.value);
    out.textContent = "";
    if (!Number.isInteger(batch) || !Number.isInteger(seq) || batch < 1 || seq < 1) {
      out.appendChild(el("p", {"class": "calc-invalid"}, words.invalid));
      return;
    }
    var fit = data.fits.filter(function (f) {
      return f.model === form.model.value && f.precision === form.precision.value
        && f.levers === form.levers.value;
    })[0];
    if (!fit) {
      out.appendChild(el("p", {"class": "calc-nofit"}, words.nofit));
      return;
    }
    var tmpl = template(widget, fit, function () { update(widget, data, words); });
    if (tmpl === undefined) {
      out.appendChild(el("p", {"class": "calc-loading"}, words.loading));
      return;
    }
    var pred = predictor(fit, tmpl);
    var r = fit.range;
    var gpu = data.gpus.filter(function (g) { return g.name === form.gpu.value; })[0] || data.gpus[0];
    if (!inRange(fit, batch, seq)) {
      var command = "python -m generator estimate " + fit.model + " --batch-size " + batch
        + " --seq-len " + seq + " --precision " + fit.precision
        + (fit.levers.indexOf("ckpt") >= 0 ? " --checkpointing" : "") + ' --gpu "' + gpu.short_name + '"';
      out.appendChild(el("p", {"class": "calc-outside admonition warning"}, fill(words.outside,
        {t0: r.tokens[0], t1: r.tokens[1], s0: r.seq[0], s1: r.seq[1], command: command})));
    }
    out.appendChild(el("p", {"class": "calc-kind"},
      fill(tmpl ? words.kind_replay : words.kind, {kind: fit.kind[lang], points: fit.points.length})));
    var list = el("dl", {"class": "calc-figures"});
    var peaks = pred.peaks(batch, seq, gpu.workspace_bytes), reserved = peaks[1];
    figure(list, words.allocated, peaks[0], words, lang, "allocated");
    figure(list, words.reserved, reserved, words, lang, "reserved");
    var ctx = gpu.context_bytes;
    list.appendChild(el("dt", {}, fill(words.smi, {context: Math.round(ctx[0] / 1048576)
      + "–" + Math.round(ctx[1] / 1048576) + " MiB"})));
    list.appendChild(el("dd", {"class": "calc-smi", "data-bytes": (reserved + ctx[0]) + " " + (reserved + ctx[1])},
      gib(reserved + ctx[0], lang) + "–" + gib(reserved + ctx[1], lang) + " " + words.unit));
    out.appendChild(list);
    out.appendChild(el("p", {"class": "calc-upper-bound"}, words.upper_bound));
    var table = el("table", {"class": "calc-cards"});
    table.appendChild(el("caption", {}, words.caption));
    var head = el("tr");
    [words.gpu, words.total, words.fits_head, words.largest_head].forEach(function (h) {
      head.appendChild(el("th", {scope: "col"}, h));
    });
    table.appendChild(el("thead")).appendChild(head);
    var body = table.appendChild(el("tbody"));
    data.gpus.forEach(function (g) {
      var row = el("tr", {"data-gpu": g.name});
      var name = el("th", {scope: "row"});
      if (g.source.indexOf("http") !== 0) name.textContent = g.short_name;
      else name.appendChild(el("a", {href: g.source, title: words.source + ": " + g.source}, g.short_name));
      row.appendChild(name);
      row.appendChild(el("td", {}, gib(g.memory_bytes, lang) + " " + words.unit
        + " (" + g.smi_total_mib.toLocaleString(lang === "zh" ? "zh-CN" : "en-US") + " MiB)"));
      var v = verdict(pred, g, batch, seq).word;
      row.appendChild(el("td", {"class": "calc-verdict", "data-verdict": v}, words.verdicts[v]));
      var most = largestBatch(pred, g, seq);
      var text = most ? String(most) : words.none;
      if (most && !inRange(fit, most, seq)) text = fill(words.beyond, {batch: most});
      row.appendChild(el("td", {"class": "calc-largest", "data-batch": String(most)}, text));
      body.appendChild(row);
    });
    out.appendChild(table);
  }

  function start(widget, data) {
    var words = JSON.parse(widget.querySelector(".calc-words").textContent);
    var form = widget.querySelector(".calc-form");
    form.addEventListener("submit", function (event) { event.preventDefault(); });
    form.addEventListener("input", function () { update(widget, data, words); });
    form.addEventListener("change", function () { update(widget, data, words); });
    update(widget, data, words);
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
    // The fits' JSON is linked from the widget (mkdocs checks that link); its sibling
    // calculator.js holds the same data as a script, which loads from file:// as well.
    var script = document.createElement("script");
    script.src = link.href.replace(/\.json$/, ".js");
    script.onload = function () {
      widgets.forEach(function (w) { start(w, window.CALCULATOR_DATA); });
    };
    document.head.appendChild(script);
  }

  // The computations the widget shows, for the test that holds them against verdicts.py.
  window.calculatorMirror = {eventsAt: eventsAt, predictor: predictor, verdict: verdict,
    largestBatch: largestBatch, inRange: inRange};

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", init);
  else init();
})();
