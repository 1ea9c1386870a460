(function () {
  "use strict";
  // Everything from the run is data: it reaches the page only through textContent,
  // never through innerHTML, so model text cannot become markup or script.
  var D = JSON.parse(document.getElementById("audit-data").textContent);
  var OUTCOMES = ["agree", "disagree", "metric_tie", "failed", "human_tie"];
  var LABEL = {agree: "agree", disagree: "disagree", metric_tie: "metric tie", failed: "failed",
               human_tie: "human tie"};
  var GROUP = [0, 0, 0, 2, 1];  // by outcome code; same order as audit_data.sort_key
  var STATUS = ["ok", "failed", "fallback"];
  var WINNER = ["A better", "B better", "tie"];
  var PAGE_SIZE = 25;
  var NV = D.variants.length;
  // a run without human pairs: one entry per image (description, scores, rationales)
  var ITEMS = D.run.mode === "items";
  var state = {variant: NV === 1 ? 0 : -1, outcome: -1, model: -1, prompt: -1,
               sort: ITEMS ? "order" : "mistakes", page: 0};
  var view = [];

  function $(id) { return document.getElementById(id); }
  function el(tag, cls, text) {
    var node = document.createElement(tag);
    if (cls) { node.className = cls; }
    if (text !== undefined && text !== null) { node.textContent = String(text); }
    return node;
  }
  function add(parent, child) { parent.appendChild(child); return child; }
  function text(i) { return i < 0 ? null : D.texts[i]; }
  function num(x, digits) {
    if (x === null || x === undefined) { return "\u2014"; }
    return Number(x).toPrecision(digits || 4).replace(/(\.\d*?)0+$/, "$1").replace(/\.$/, "");
  }
  function int(n) { return Number(n).toLocaleString("en-US"); }
  function plural(n, word) { return int(n) + " " + word + (n === 1 ? "" : "s"); }
  function pct(x, digits) {
    return x === null || x === undefined ? "\u2014" : (100 * x).toFixed(digits === undefined ? 1 : digits) + "%";
  }
  function money(x) { return x === null || x === undefined ? "\u2014" : "$" + Number(x).toFixed(4); }
  function words(s) { return s ? s.trim().split(/\s+/).length : 0; }
  function clip(s, n) { return s.length > n ? s.slice(0, n).trimEnd() + "\u2026" : s; }

  // ---------------------------------------------------------------- summary
  function renderItemsSummary() {
    var run = D.run;
    $("run-facts").textContent = plural(run.n_items, "image") + ", no human pairs, " +
      plural(NV, "variant") + ". Describer cost " + money(run.describer_cost) +
      (run.n_missing_images ? ". " + plural(run.n_missing_images, "image") + " could not be read" : "") +
      ". Run dir: " + run.run_dir;
    var table = $("summary");
    var head = add(table, el("tr"));
    ["variant", "ok items", "mean score (ok items)", "failed items", "fallback items", "judge cost"].forEach(function (h) {
      add(head, el("th", "", h));
    });
    D.variants.forEach(function (v) {
      var row = add(table, el("tr"));
      [v.name, int(v.n_ok), num(v.mean), int(v.n_failed), v.fallback, money(v.cost)].forEach(function (c) {
        add(row, el("td", "", c));
      });
    });
    $("notes").textContent = "This run has no human pairs, so there is nothing to agree with: each entry " +
      "is one image with its description and every variant's score and rationale. Mean scores count ok " +
      "items only (a fallback score is another judge's scale).";
  }

  // a line per variant whose scores came from its fallback or whose model was stopped
  function renderOrigins() {
    var list = $("origins");
    D.variants.forEach(function (v) {
      if (v.origin_note) { add(list, el("li", "", v.origin_note)); }
    });
    list.hidden = !list.firstChild;
  }

  function renderSummary() {
    var run = D.run;
    $("title").textContent = "titjudge audit \u2014 " + run.name;
    renderOrigins();
    if (ITEMS) { renderItemsSummary(); return; }
    $("run-facts").textContent = plural(run.n_items, "image") + ", " + plural(run.n_pairs, "human pair") +
      " (" + plural(run.n_human_ties, "human tie") +
      (run.n_outside ? ", " + plural(run.n_outside, "pair") + " outside this run" : "") +
      "), " + plural(NV, "variant") + ". Describer cost " + money(run.describer_cost) +
      (run.n_missing_images ? ". " + plural(run.n_missing_images, "image") + " could not be read" : "") +
      ". Run dir: " + run.run_dir;
    var table = $("summary");
    var head = add(table, el("tr"));
    ["variant", "pairwise accuracy", "95% CI", "metric-tie rate", "agree", "disagree", "metric tie",
     "failed pairs", "failed items", "fallback items", "judge cost"].forEach(function (h) {
      add(head, el("th", "", h));
    });
    D.variants.forEach(function (v) {
      var row = add(table, el("tr"));
      var ci = v.ci ? pct(v.ci[0]) + " \u2013 " + pct(v.ci[1]) : "\u2014";
      [v.name, pct(v.accuracy), ci, pct(v.tie_rate, 2), int(v.counts.agree), int(v.counts.disagree),
       int(v.counts.metric_tie), int(v.counts.failed), int(v.n_failed), v.fallback, money(v.cost)].forEach(function (c) {
        add(row, el("td", "", c));
      });
    });
    $("notes").textContent = "Margin = score(human-preferred) \u2212 score(other): negative is a mistake. " +
      "\u201cMost confident mistakes first\u201d sorts by margin ascending" +
      (NV > 1 ? "; across all variants, margins are divided by each variant's score spread (sd)." : ".");
  }

  // ---------------------------------------------------------------- length breakdown
  function renderLength() {
    if (!D.length) { return; }
    var table = $("length-table");
    add(table, el("caption", "", "Pairwise accuracy by prompt length (words; quartile buckets)"));
    var head = add(table, el("tr"));
    ["prompt length", "variant", "human pairs", "pairs counted", "pairwise accuracy", "95% CI", "SRCC"].forEach(function (h) {
      add(head, el("th", "", h));
    });
    D.length.rows.forEach(function (r) {
      var row = add(table, el("tr"));
      var ci = r[5] ? pct(r[5][0]) + " \u2013 " + pct(r[5][1]) : "\u2014";
      [r[0], r[1], int(r[2]), int(r[3]), pct(r[4]), ci, num(r[6])].forEach(function (c) {
        add(row, el("td", "", c));
      });
    });
    $("length-plot").src = D.length.plot;
    $("length").hidden = false;
  }

  // ---------------------------------------------------------------- filters
  function option(select, value, label) { select.appendChild(new Option(label, String(value))); }
  function setupFilters() {
    var fv = $("f-variant"), fo = $("f-outcome"), fm = $("f-model"), fp = $("f-prompt"), fs = $("f-sort");
    if (NV > 1) { option(fv, -1, "any variant"); }
    D.variants.forEach(function (v, i) { option(fv, i, v.name); });
    option(fo, -1, "all");
    if (ITEMS) {
      fo.parentNode.firstChild.textContent = "Status ";
      STATUS.forEach(function (o, i) { option(fo, i, o); });
    } else {
      OUTCOMES.forEach(function (o, i) { option(fo, i, LABEL[o]); });
    }
    option(fm, -1, "all");
    D.models.forEach(function (m, i) { option(fm, i, m); });
    option(fp, -1, "all");
    D.prompts.forEach(function (p, i) { option(fp, i, p[0] + " \u2014 " + clip(text(p[1]) || "", 48)); });
    if (ITEMS) {
      option(fs, "order", "item order");
      option(fs, "high", "highest score first");
      option(fs, "low", "lowest score first");
    } else {
      option(fs, "mistakes", "most confident mistakes first");
      option(fs, "agreements", "most confident agreements first");
      option(fs, "order", "pair order");
    }
    fv.value = String(state.variant);
    [["f-variant", "variant"], ["f-outcome", "outcome"], ["f-model", "model"], ["f-prompt", "prompt"],
     ["f-sort", "sort"]].forEach(function (pair) {
      $(pair[0]).addEventListener("change", function (event) {
        var value = event.target.value;
        state[pair[1]] = pair[1] === "sort" ? value : Number(value);
        state.page = 0;
        update();
      });
    });
    function step(delta) {
      return function () {
        var last = Math.max(0, Math.ceil(view.length / PAGE_SIZE) - 1);
        state.page = Math.min(last, Math.max(0, state.page + delta));
        render();
        window.scrollTo(0, 0);
      };
    }
    $("prev").addEventListener("click", step(-1));
    $("next").addEventListener("click", step(1));
    $("prev2").addEventListener("click", step(-1));
    $("next2").addEventListener("click", step(1));
  }

  function matches(p) {
    var a = D.items[p[0]], b = D.items[p[1]];
    if (state.prompt >= 0 && a[1] !== state.prompt) { return false; }
    if (state.model >= 0 && a[2] !== state.model && b[2] !== state.model) { return false; }
    if (state.outcome < 0) { return true; }
    if (state.variant >= 0) { return p[3][state.variant] === state.outcome; }
    return p[3].indexOf(state.outcome) >= 0;
  }

  // (group, direction * margin / scale), minimised over variants when none is chosen
  function keyOf(p, direction) {
    var best = null;
    for (var v = 0; v < NV; v++) {
      if (state.variant >= 0 && v !== state.variant) { continue; }
      var o = p[3][v], m = p[4][v], scale = state.variant >= 0 ? 1 : D.variants[v].scale;
      var k = m === null ? 0 : (o === 4 ? -Math.abs(m) : direction * m) / scale;
      if (best === null || GROUP[o] < best[0] || (GROUP[o] === best[0] && k < best[1])) {
        best = [GROUP[o], k];
      }
    }
    return best;
  }

  function itemMatches(item) {
    if (state.prompt >= 0 && item[1] !== state.prompt) { return false; }
    if (state.model >= 0 && item[2] !== state.model) { return false; }
    if (state.outcome < 0) { return true; }
    for (var v = 0; v < NV; v++) {
      if (state.variant >= 0 && v !== state.variant) { continue; }
      if (item[5][v] && item[5][v][0] === state.outcome) { return true; }
    }
    return false;
  }

  // the score a sort by score uses: the chosen variant's (the first variant's when none is)
  function itemScore(item) {
    var r = item[5][state.variant >= 0 ? state.variant : 0];
    return r && r[0] !== 1 && r[1] !== null ? r[1] : null;
  }

  function updateItems() {
    view = [];
    for (var i = 0; i < D.items.length; i++) { if (itemMatches(D.items[i])) { view.push(i); } }
    if (state.sort !== "order") {
      var direction = state.sort === "high" ? -1 : 1;
      view.sort(function (x, y) {
        var sx = itemScore(D.items[x]), sy = itemScore(D.items[y]);
        if (sx === null || sy === null) { return (sx === null) - (sy === null) || x - y; }
        return direction * (sx - sy) || x - y;
      });
    }
  }

  function update() {
    var started = performance.now();
    if (ITEMS) {
      updateItems();
      render();
      window.__auditLastUpdateMs = performance.now() - started;
      return;
    }
    view = [];
    for (var i = 0; i < D.pairs.length; i++) { if (matches(D.pairs[i])) { view.push(i); } }
    if (state.sort !== "order") {
      var direction = state.sort === "mistakes" ? 1 : -1;
      var keys = {};
      view.forEach(function (i) { keys[i] = keyOf(D.pairs[i], direction); });
      view.sort(function (x, y) {
        var kx = keys[x], ky = keys[y];
        return kx[0] - ky[0] || kx[1] - ky[1] || x - y;
      });
    }
    render();
    window.__auditLastUpdateMs = performance.now() - started;
  }

  // ---------------------------------------------------------------- entries
  function longText(parent, cls, summary, body, open) {
    var box = add(parent, el("details", cls));
    if (open) { box.open = true; }
    add(box, el("summary", "", summary));
    add(box, el("p", "longtext", body));
    return box;
  }

  function descriptionOf(item, v) {
    var r = item[5][v];
    if (!r) { return null; }
    return r[5] >= 0 ? {text: text(r[5])} : {error: r[8] >= 0 ? text(r[8]) : null};
  }

  function sameDescription(item) {
    var first = item[5][0] ? item[5][0][5] : -1;
    for (var v = 1; v < NV; v++) { if (!item[5][v] || item[5][v][5] !== first) { return false; } }
    return true;
  }

  function side(parent, item, label, won) {
    var fig = add(parent, el("figure", "side" + (won ? " win" : "")));
    if (item[3] >= 0) {
      var img = add(fig, el("img"));
      img.alt = "thumbnail of " + item[0];
      img.loading = "lazy";
      img.src = D.thumbs[item[3]];
    } else {
      add(fig, el("div", "noimg", "image unavailable"));
    }
    var info = add(fig, el("div", "info"));
    add(info, el("div", "label", label + (won ? " \u00b7 preferred by humans" : "")));
    var meta = add(info, el("div", "meta", D.models[item[2]] + " \u00b7 " + item[0] + " "));
    if (item[4]) {
      var link = add(meta, el("a", "", "open original"));
      link.href = item[4];
    }
    if (sameDescription(item)) {
      var d = descriptionOf(item, 0);
      if (d && d.text !== undefined) {
        longText(info, "desc", "description (" + words(d.text) + " words)", d.text, false);
      } else {
        add(info, el("div", "err", "no description" + (d && d.error ? ": " + d.error : "")));
      }
    }
  }

  function variantSide(parent, item, v, label) {
    var r = item[5][v], box = add(parent, el("div"));
    add(box, el("h4", "", label + (r ? " \u00b7 " + STATUS[r[0]] + (r[7] !== null ? " \u00b7 " + money(r[7]) : "") : "")));
    if (!r) { add(box, el("p", "err", "not in this run")); return; }
    add(box, el("p", "longtext", text(r[2]) || "(no rationale)"));
    if (r[3] >= 0) { add(box, el("p", "err", "error: " + text(r[3]))); }
    if (r[6] >= 0) { add(box, el("pre", "", text(r[6]))); }
    if (!sameDescription(item)) {
      var d = descriptionOf(item, v);
      if (d && d.text !== undefined) { longText(box, "desc", "description", d.text, false); }
    }
    if (r[4] >= 0) {
      var raw = add(box, el("details", "raw"));
      add(raw, el("summary", "", "raw output"));
      add(raw, el("pre", "", text(r[4])));
    }
  }

  function entry(rank, index) {
    var p = D.pairs[index], a = D.items[p[0]], b = D.items[p[1]];
    var focus = state.variant >= 0 ? state.variant : 0;
    var card = el("article", "entry");
    card.dataset.pair = a[0] + "|" + b[0];
    card.dataset.outcome = OUTCOMES[p[3][focus]];
    card.dataset.margin = p[4][focus] === null ? "" : String(p[4][focus]);
    var head = add(card, el("header"));
    add(head, el("span", "rank", "#" + rank));
    add(head, el("span", "human", "Human verdict: " + WINNER[p[2]]));
    add(head, el("span", "pid", a[0] + " | " + b[0]));
    for (var v = 0; v < NV; v++) {
      add(head, el("span", "badge o-" + OUTCOMES[p[3][v]],
        (NV > 1 ? D.variants[v].name + ": " : "") + LABEL[OUTCOMES[p[3][v]]]));
    }
    var prompt = D.prompts[a[1]], promptText = text(prompt[1]) || "(prompt not in the manifest)";
    var promptBox = longText(card, "prompt", "Prompt " + prompt[0] + " (" + words(promptText) + " words)",
                             promptText, false);
    promptBox.firstChild.appendChild(el("span", "preview", ": " + clip(promptText, 140)));
    var sides = add(card, el("div", "sides"));
    side(sides, a, "A", p[2] === 0);
    side(sides, b, "B", p[2] === 1);
    var table = add(card, el("table", "scores"));
    var hr = add(table, el("tr"));
    ["variant", "score A", "score B", "margin", "verdict", ""].forEach(function (h) { add(hr, el("th", "", h)); });
    for (v = 0; v < NV; v++) {
      var ra = a[5][v], rb = b[5][v];
      var row = add(table, el("tr", v === state.variant ? "focus" : ""));
      add(row, el("td", "", D.variants[v].name));
      add(row, el("td", "", ra ? num(ra[1]) : "\u2014"));
      add(row, el("td", "", rb ? num(rb[1]) : "\u2014"));
      add(row, el("td", "", p[4][v] === null ? "\u2014" : (p[4][v] > 0 ? "+" : "") + num(p[4][v], 3)));
      add(add(row, el("td")), el("span", "badge o-" + OUTCOMES[p[3][v]], LABEL[OUTCOMES[p[3][v]]]));
      var notes = [];
      [[ra, "A"], [rb, "B"]].forEach(function (pair) {
        if (pair[0] && pair[0][0] !== 0) { notes.push(pair[1] + " " + STATUS[pair[0][0]]); }
      });
      add(row, el("td", "note", notes.join(", ")));
    }
    for (v = 0; v < NV; v++) {
      var open = v === state.variant || (state.variant < 0 && p[3][v] === 1);
      var box = add(card, el("details", "vr"));
      if (open) { box.open = true; }
      add(box, el("summary", "", D.variants[v].name + ": rationales"));
      if (p[5] && p[5][v]) { judgedBox(box, p[5][v], a); continue; }
      var two = add(box, el("div", "two"));
      variantSide(two, a, v, "A");
      variantSide(two, b, v, "B");
    }
    return card;
  }

  function itemEntry(rank, index) {
    var item = D.items[index];
    var focus = state.variant >= 0 ? state.variant : 0;
    var card = el("article", "entry");
    card.dataset.item = item[0];
    var score = itemScore(item);
    card.dataset.score = score === null ? "" : String(score);
    var head = add(card, el("header"));
    add(head, el("span", "rank", "#" + rank));
    add(head, el("span", "pid", item[0] + " \u00b7 " + D.models[item[2]]));
    var prompt = D.prompts[item[1]], promptText = text(prompt[1]) || "(prompt not in the manifest)";
    var promptBox = longText(card, "prompt", "Prompt " + prompt[0] + " (" + words(promptText) + " words)",
                             promptText, false);
    promptBox.firstChild.appendChild(el("span", "preview", ": " + clip(promptText, 140)));
    var sides = add(card, el("div", "sides"));
    side(sides, item, "Image", false);
    var table = add(card, el("table", "scores"));
    var hr = add(table, el("tr"));
    ["variant", "score", "status"].forEach(function (h) { add(hr, el("th", "", h)); });
    for (var v = 0; v < NV; v++) {
      var r = item[5][v], row = add(table, el("tr", v === state.variant ? "focus" : ""));
      add(row, el("td", "", D.variants[v].name));
      add(row, el("td", "", r && r[0] !== 1 ? num(r[1]) : "\u2014"));
      add(row, el("td", "", r ? STATUS[r[0]] : "absent"));
    }
    for (v = 0; v < NV; v++) {
      var box = add(card, el("details", "vr"));
      if (v === focus) { box.open = true; }
      add(box, el("summary", "", D.variants[v].name + ": rationale"));
      variantSide(add(box, el("div", "two")), item, v, D.variants[v].name);
    }
    return card;
  }

  function render() {
    var main = $("entries");
    var what = ITEMS ? "item" : "pair", total = ITEMS ? D.items.length : D.pairs.length;
    var pages = Math.max(1, Math.ceil(view.length / PAGE_SIZE));
    var start = state.page * PAGE_SIZE, stop = Math.min(view.length, start + PAGE_SIZE);
    var fragment = document.createDocumentFragment();
    for (var i = start; i < stop; i++) {
      fragment.appendChild(ITEMS ? itemEntry(i + 1, view[i]) : entry(i + 1, view[i]));
    }
    if (!view.length) { fragment.appendChild(el("p", "empty", "No " + what + " matches these filters.")); }
    main.replaceChildren(fragment);
    var count = $("count");
    count.dataset.matched = String(view.length);
    count.dataset.total = String(total);
    count.textContent = (view.length ? "Showing " + int(start + 1) + "\u2013" + int(stop) + " of " : "") +
      plural(view.length, "matching " + what) + " (" + int(total) + " in run)";
    $("page").textContent = "page " + int(state.page + 1) + " of " + int(pages);
    $("prev").disabled = $("prev2").disabled = state.page === 0;
    $("next").disabled = $("next2").disabled = state.page >= pages - 1;
  }

  // the models whose replies came from another model than configured, or from several
  function renderModels() {
    // each variant's provenance: model asked for and answering, template and its sha256
    D.variants.forEach(function (v) {
      if (v.provenance) { add($("models"), el("div", "provenance", v.provenance)); }
      if (v.position) { add($("models"), el("div", "provenance", v.position)); }
    });
    (D.run.answered_by || []).forEach(function (m) {
      add($("models"), el("div", m.warning ? "model-warning" : "", m.line));
    });
  }

  // a pairwise judge's verdict on a pair: each order's choice and rationale
  function judgedBox(parent, judged, a) {
    add(parent, el("p", "", "Verdict: " + (judged[0] === null ? "none (an order failed)" : judged[0]) +
      "; the orders " + (judged[1] === null ? "could not be compared" : judged[1] ? "agreed" : "disagreed")));
    judged[2].forEach(function (o, n) {
      var box = add(parent, el("div", "order"));
      add(box, el("strong", "", "Order " + (n + 1) + " (" + (o[0] === a[0] ? "A" : "B") +
        " shown first): " + (o[1] === null ? "failed" : o[1])));
      var why = text(o[2]) || text(o[3]);
      if (why) { add(box, el("p", "", why)); }
    });
  }

  renderSummary();
  renderLength();
  renderModels();
  setupFilters();
  update();
  document.body.dataset.ready = "1";
  window.__auditReadyMs = performance.now();
})();
