// The titjudge workbench: every view is the URL's #fragment; every string from a run is put
// in as text (textContent), never as markup. Served, it asks the server's JSON API (which
// pages and filters); as a bundle (`titjudge view --bundle`), it reads window.TITJUDGE_BUNDLE
// and applies the same filters here (titjudge.workbench.views.keeps is the reference).
"use strict";

const BUNDLE = window.TITJUDGE_BUNDLE || null;
const TOKEN = new URLSearchParams(window.location.search).get("token");
const PAGE_SIZE = 50;
const SCORED = new Set(["agree", "disagree", "metric_tie"]);
const SYMBOL = { agree: "✓", disagree: "✗", metric_tie: "=", failed: "!", human_tie: "~" };

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (key === "text") node.textContent = String(value);
    else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else node.setAttribute(key, value === true ? "" : String(value));
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

const pct = (x) => (x === null || x === undefined ? "n/a" : (100 * x).toFixed(2) + "%");
const num = (x) => (x === null || x === undefined ? "n/a" : Number(x).toFixed(4));
// people's verdict with its margin where the pairs file keeps the votes: "A 7-2 (1 tie)"
function people(winner, votes) {
  const said = winner === "tie" ? "tie" : `${winner.toUpperCase()} preferred`;
  if (!votes) return said;
  const ties = votes[2] ? ` (${votes[2]} tie${votes[2] === 1 ? "" : "s"})` : "";
  return `${said}, ${votes[0]}–${votes[1]}${ties}`;
}
const ci = (pair) => (pair ? `[${pct(pair[0])}, ${pct(pair[1])}]` : "");

function route() {
  const hash = window.location.hash.replace(/^#\/?/, "") || "runs";
  const [name, query] = hash.split("?");
  return { name, params: new URLSearchParams(query || "") };
}

function go(name, params) {
  const query = new URLSearchParams(params).toString();
  window.location.hash = `#/${name}${query ? "?" + query : ""}`;
}

// ------------------------------------------------------------------------------- data

async function post(name, body) {
  const query = TOKEN ? `?token=${encodeURIComponent(TOKEN)}` : "";
  const response = await fetch(`/api/${name}${query}`, {
    method: "POST",
    headers: { Accept: "application/json", "Content-Type": "application/json" },
    body: JSON.stringify(body),
  });
  const found = await response.json();
  if (!response.ok) throw new Error(found.error || response.statusText);
  return found;
}

function annotateUrl() {
  return TOKEN ? `annotate/?token=${encodeURIComponent(TOKEN)}` : "annotate/";
}

async function api(name, params) {
  if (BUNDLE) return local(name, params);
  const query = new URLSearchParams(params);
  if (TOKEN) query.set("token", TOKEN);
  const response = await fetch(`/api/${name}?${query}`, { headers: { Accept: "application/json" } });
  const body = await response.json();
  if (!response.ok) throw new Error(body.error || response.statusText);
  return body;
}

function imageUrl(url) {
  if (BUNDLE || !TOKEN) return url;
  return `${url}?token=${encodeURIComponent(TOKEN)}`;
}

function ids(text) {
  return (text || "").split(",").filter(Boolean);
}

// the bundle's answers: the same documents the server gives, from the precomputed data
function local(name, params) {
  const p = new URLSearchParams(params);
  if (name === "runs") return BUNDLE.runs;
  if (name === "compare") {
    const found = BUNDLE.compare[`${p.get("a")}|${p.get("b")}`];
    if (!found) throw new Error("this bundle holds no comparison of these two runs");
    return found;
  }
  if (name === "pair") {
    const found = BUNDLE.pairs[p.get("key")];
    if (!found) throw new Error("no chosen run has this pair");
    const chosen = new Set(ids(p.get("runs")));
    return { ...found, runs: found.runs.filter((r) => chosen.has(r.id)) };
  }
  if (name === "pictures") {
    const focus = p.get("focus") || ids(p.get("runs"))[0];
    const found = BUNDLE.pictures[focus];
    if (!found) throw new Error(`no run ${focus} in this bundle`);
    const chosen = ids(p.get("runs"));
    const keep = found.heatmap.runs.map((r) => chosen.includes(r.id));
    const cells = {};
    for (const [variant, row] of Object.entries(found.heatmap.cells)) {
      cells[variant] = row.filter((_, i) => keep[i]);
    }
    const heat = { runs: found.heatmap.runs.filter((_, i) => keep[i]), variants: found.heatmap.variants, cells };
    return { ...found, heatmap: heat };
  }
  if (name === "pairs") return localPairs(p);
  if (name === "items") return localItems(p);
  if (name === "item") {
    const found = (BUNDLE.item_pages[p.get("run")] || {})[p.get("item")];
    if (!found) throw new Error(`no item ${p.get("item")} in run ${p.get("run")}`);
    return found;
  }
  throw new Error(`unknown view ${name}`);
}

function keeps(row, labels, f) {
  if (f.min_words !== null && row.words < f.min_words) return false;
  if (f.max_words !== null && row.words > f.max_words) return false;
  if (f.model && !row.models.includes(f.model)) return false;
  if (f.q && !row.text.some((t) => t.includes(f.q.toLowerCase()))) return false;
  const scored = row.outcomes.filter((o) => SCORED.has(o));
  if (f.filter === "all_wrong") return scored.length > 0 && !scored.includes("agree");
  if (f.filter === "disagree") return scored.includes("agree") && scored.some((o) => o !== "agree");
  if (f.filter === "changed") {
    const byLabel = new Map(labels.map((label, i) => [label, row.outcomes[i]]));
    for (const [label, outcome] of byLabel) {
      const [run, ...rest] = label.split(":");
      if (run !== f.a) continue;
      const other = byLabel.get(`${f.b}:${rest.join(":")}`);
      if (SCORED.has(outcome) && SCORED.has(other) && (outcome === "agree") !== (other === "agree")) return true;
    }
    return false;
  }
  return true;
}

function localItems(p) {
  const run = p.get("run");
  const all = BUNDLE.items[run];
  if (!all) throw new Error(`no run ${run} in this bundle`);
  const status = p.get("status") || "all";
  const q = (p.get("q") || "").toLowerCase();
  const model = p.get("model") || null;
  const rows = all.filter((row) => (!model || row.t2i_model === model) && (!q || row.text.includes(q)) &&
    (status === "all" || row.results.some((r) => r && r.status === status)));
  const pages = Math.max(1, Math.ceil(rows.length / PAGE_SIZE));
  const page = Math.min(Math.max(1, wholeNumber(p.get("page")) || 1), pages);
  const found = BUNDLE.runs.runs.find((r) => r.id === run);
  const variants = BUNDLE.item_pages[run] && all.length ? BUNDLE.item_pages[run][all[0].item_id].variants.map((v) => v.name) : [];
  return { run: { id: run, label: found ? found.label : run }, variants, total: rows.length, page, pages,
    rows: rows.slice((page - 1) * PAGE_SIZE, page * PAGE_SIZE), models: [...new Set(all.map((r) => r.t2i_model))].sort() };
}

function wholeNumber(value) {
  if (value === null || value === "") return null;
  if (!/^-?\d+$/.test(value)) throw new Error(`not a whole number: ${value}`);
  return Number(value);
}

function localPairs(p) {
  const chosen = ids(p.get("runs"));
  if (!chosen.length) throw new Error("choose at least one run");
  const kind = p.get("kind") || null;
  const picked = [];
  BUNDLE.columns.forEach((c, i) => {
    if (chosen.includes(c.run) && (!kind || c.kind === kind)) picked.push(i);
  });
  const f = {
    filter: p.get("filter") || "all",
    a: p.get("a"),
    b: p.get("b"),
    min_words: wholeNumber(p.get("min_words")),
    max_words: wholeNumber(p.get("max_words")),
    model: p.get("model") || null,
    q: p.get("q") || null,
  };
  const labels = picked.map((i) => BUNDLE.columns[i].label);
  const rows = [];
  for (const row of BUNDLE.rows) {
    const inChosen = row.runs.some((r) => chosen.includes(r));
    if (!inChosen) continue;
    const shaped = {
      ...row,
      outcomes: picked.map((i) => row.outcomes[i]),
      text: picked.map((i) => row.text[i]),
      keys: picked.map((i) => row.keys[i]),
    };
    if (keeps(shaped, labels, f)) rows.push(shaped);
  }
  const sort = p.get("sort");
  if (sort) {  // views.filtered_rows: the column's most confident mistakes first, stable
    const at = labels.indexOf(sort);
    if (at < 0) throw new Error(`no column ${sort} to sort by`);
    const key = (row) => row.keys[at] || [9, 0];
    rows.sort((x, y) => key(x)[0] - key(y)[0] || key(x)[1] - key(y)[1]);
  }
  const pages = Math.max(1, Math.ceil(rows.length / PAGE_SIZE));
  const page = Math.min(Math.max(1, wholeNumber(p.get("page")) || 1), pages);
  return {
    columns: picked.map((i) => BUNDLE.columns[i]),
    total: rows.length,
    page,
    pages,
    rows: rows.slice((page - 1) * PAGE_SIZE, page * PAGE_SIZE),
    models: [...new Set(rows.flatMap((r) => r.models))].sort(),
  };
}

// ------------------------------------------------------------------------------ views

let RUNS = null;

async function runsDoc() {
  if (RUNS === null) RUNS = await api("runs", {});
  return RUNS;
}

function selected(params, doc) {
  const given = ids(params.get("runs") || params.get("sel"));
  if (given.length) return given;
  return doc.runs.filter((r) => !r.in_progress && !r.problem).map((r) => r.id);
}

function liveBlock(run) {
  const live = run.live;
  if (!live) return el("p", { class: "note", text: `${run.id} ${run.label}: in progress (no live record: an older titjudge, or a run that died)` });
  const share = live.total ? Math.round((100 * live.done) / live.total) : 0;
  const bar = el("progress", { max: Math.max(live.total, 1), value: live.done, "data-run": run.id });
  const eta = live.eta_seconds === null ? "" : ` · about ${Math.round(live.eta_seconds)} s left`;
  const pairs = live.pairs_total ? ` · pairs ${live.pairs_done} / ${live.pairs_total}` : "";
  const judges = el("table", { class: "live-judges", "data-run": run.id }, el("tr", {}, ["judge", "ok", "fallback", "failed", "mean score"].map((h) => el("th", { text: h }))),
    Object.entries(live.judges).map(([name, j]) => el("tr", { "data-judge": name }, el("td", { text: name }),
      [j.ok, j.fallback, j.failed].map((n) => el("td", { class: "num", text: n })), el("td", { class: "num", text: num(j.mean_score) }))));
  const recent = el("ul", { class: "live-recent", "data-run": run.id }, [...live.recent].reverse().map((a) => el("li", { "data-item": a.item_id },
    `${a.item_id} · ${a.judge}: `, el("strong", { text: a.status === "failed" ? "failed" : num(a.score) }),
    a.answered_by.length ? ` (${a.answered_by.join(", ")})` : "",
    a.rationale ? el("span", { class: "rationale", text: ` — ${a.rationale}` }) : null,
    a.error ? el("span", { class: "error", text: ` — ${a.error}` }) : null)));
  return el("section", { class: "live", "data-run": run.id },
    el("h3", { text: `${run.id} ${live.name} is running (${run.label})` }),
    el("p", { "data-field": "live-progress" }, bar, ` ${live.done} / ${live.total} items (${share}%), ${live.failed_items} failed${pairs}${eta} · ${live.calls} calls, ${live.cost_text}` +
      (live.stopped.length ? ` · stopped: ${live.stopped.join(", ")}` : "") + ` · updated ${live.updated}`),
    judges, el("h4", { text: "Latest answers" }), recent);
}

let LIVE_TIMER = null;

async function viewRuns(params) {
  RUNS = null;  // the runs page looks again every time (a run may have finished)
  const doc = await runsDoc();
  if (LIVE_TIMER) { clearTimeout(LIVE_TIMER); LIVE_TIMER = null; }
  const running = doc.runs.filter((r) => r.in_progress);
  if (running.length && !BUNDLE) {
    LIVE_TIMER = setTimeout(() => { if (route().name === "runs") render(); }, 2000);
  }
  // what is ticked stays ticked when the page looks again (a run in progress refreshes it)
  const ticked = [...document.querySelectorAll("#runs input:checked")].map((b) => b.value);
  const chosen = new Set([...ids(params.get("sel")), ...ticked]);
  const boxes = [];
  const table = el("table", { id: "runs" },
    el("tr", {}, ["", "run", "name", "items", "failed", "cost", "status", "variant", "kind", "model (answered by)",
      "accuracy", "CI", "pairs", "failed", "fallback", "set's own number"].map((h) => el("th", { text: h }))));
  for (const run of doc.runs) {
    const box = el("input", { type: "checkbox", value: run.id, "data-run": run.id, checked: chosen.has(run.id) });
    boxes.push(box);
    const status = run.in_progress ? "in progress" : run.problem ? `cannot be read: ${run.problem}` : (run.stopped && run.stopped.length ? `stopped: ${run.stopped.join(", ")}` : "finished");
    const variants = run.variants || [];
    const span = Math.max(1, variants.length);
    const head = [
      el("td", { rowspan: span }, box),
      el("td", { rowspan: span, text: `${run.id} ${run.label}` }),
      el("td", { rowspan: span, text: run.name || "" }),
      el("td", { rowspan: span, class: "num", text: run.items ?? "" }),
      el("td", { rowspan: span, class: "num", text: run.failed_items ?? "" }),
      el("td", { rowspan: span, "data-field": "cost", text: run.cost_text || "" }),
      el("td", { rowspan: span, class: run.problem ? "error" : "", text: status }),
    ];
    if (!variants.length) {
      table.append(el("tr", {}, head, el("td", { colspan: 9, class: "note", text: run.dataset || "no metrics" })));
      continue;
    }
    variants.forEach((v, i) => {
      const cell = (field, text, cls) => el("td", { "data-run": run.id, "data-variant": v.name, "data-field": field, class: cls || "", text });
      const model = (v.model ? `${v.model}${v.answered_by.length ? " → " + v.answered_by.join(", ") : ""}` : "—") +
        (v.template ? ` · template ${v.template} (sha256 ${v.template_sha256})` : "");
      const fallback = v.n_fallback ? `${v.n_fallback} (${v.fallback_share ?? "?"}) from ${v.fallback_judge || "?"}` : "0";
      const own = v.protocol ? `${v.protocol.measure}: ${num(v.protocol.value)}` : "";
      table.append(el("tr", {}, i === 0 ? head : [],
        cell("variant", v.name), cell("kind", v.kind || ""), cell("model", model),
        cell("accuracy", pct(v.accuracy), "num"), cell("ci", ci(v.ci)), cell("n_pairs", v.n_pairs, "num"),
        cell("n_failed", v.n_failed, "num"), cell("fallback", fallback), cell("protocol", own)));
    });
  }
  const picked = () => boxes.filter((b) => b.checked).map((b) => b.value);
  const actions = el("p", {},
    el("button", { id: "to-pairs", text: "Pairs of the selected runs", onclick: () => go("pairs", { runs: picked().join(",") || selected(params, doc).join(",") }) }), " ",
    el("button", { id: "to-compare", text: "Compare two selected runs", onclick: () => {
      const two = picked();
      if (two.length !== 2) { alertLine("select exactly two runs to compare"); return; }
      go("compare", { a: two[0], b: two[1] });
    } }), " ",
    el("button", { id: "to-pictures", text: "Pictures", onclick: () => go("pictures", { runs: picked().join(",") || selected(params, doc).join(",") }) }), " ",
    el("button", { id: "to-items", text: "Images of a selected run", onclick: () => go("items", { run: picked()[0] || selected(params, doc)[0] }) }),
    el("span", { id: "message", class: "error" }));
  const notes = doc.runs.filter((r) => r.dataset).map((r) => el("p", { class: "note", text: `${r.id}: ${r.dataset}` }));
  const answered = doc.runs.flatMap((r) => (r.answered_notes || []).map((n) =>
    el("p", { class: n.warning ? "error answered" : "note answered", "data-run": r.id, text: `${r.id}: ${n.text}` })));
  return [el("h2", { text: `Runs under ${doc.root}` }), running.map(liveBlock), answered, actions, table, notes];
}

function alertLine(text) {
  const found = document.getElementById("message");
  if (found) found.textContent = text;
}

async function viewCompare(params) {
  const doc = await api("compare", { a: params.get("a"), b: params.get("b") });
  const changes = el("table", { id: "changes" }, el("tr", {}, ["setting", doc.runs[0].label, doc.runs[1].label].map((h) => el("th", { text: h }))),
    doc.config_changes.map((c) => el("tr", {}, el("td", { text: c.key }), el("td", { text: JSON.stringify(c.from) }), el("td", { text: JSON.stringify(c.to) }))));
  const variants = el("table", { id: "compared" }, el("tr", {}, ["column", "accuracy", "CI", "pairs", "correct"].map((h) => el("th", { text: h }))),
    doc.variants.map((v) => el("tr", {},
      el("td", { text: v.column }),
      el("td", { class: "num", "data-column": v.column, "data-field": "accuracy", text: pct(v.pairwise_accuracy) }),
      el("td", { text: ci(v.ci) }), el("td", { class: "num", text: v.n_pairs ?? "" }), el("td", { class: "num", text: v.n_correct ?? "" }))));
  const tests = el("table", { id: "mcnemar" }, el("tr", {}, ["a", "b", "pairs", "both right", "a only", "b only", "both wrong", "p (exact McNemar)"].map((h) => el("th", { text: h }))),
    doc.mcnemar.map((t) => el("tr", {}, el("td", { text: t.variant_a }), el("td", { text: t.variant_b }),
      [t.n_pairs, t.both_correct, t.a_only, t.b_only, t.both_wrong].map((n) => el("td", { class: "num", text: n })),
      el("td", { class: "num", "data-field": "p_value", text: t.p_value === null ? "n/a" : Number(t.p_value).toPrecision(4) }))));
  return [el("h2", { text: `${doc.runs[0].label} against ${doc.runs[1].label}` }),
    el("p", { text: `${doc.n_shared_pairs} shared pairs (${doc.n_shared_non_tie} not ties)` }),
    doc.notes.map((n) => el("p", { class: "note", text: n })),
    el("h3", { text: "What changed in the config" }), doc.config_changes.length ? changes : el("p", { text: "nothing" }),
    el("h3", { text: "Each variant on the shared pairs" }), variants,
    el("h3", { text: "Paired tests" }), tests];
}

function filterForm(params, doc, runs) {
  const field = (label, input) => el("label", {}, label, input);
  const select = (name, options, value) => el("select", { name }, options.map(([v, t]) => el("option", { value: v, text: t, selected: v === value })));
  const which = select("filter", [["all", "all pairs"], ["all_wrong", "every judge wrong"], ["disagree", "judges disagree"], ["changed", "changed between run A and run B"]], params.get("filter") || "all");
  const runOptions = [["", "—"], ...runs.map((r) => [r, r])];
  const kinds = [...new Set(doc.columns.map((c) => c.kind).filter(Boolean))];
  const form = el("form", { class: "filters", id: "filters", onsubmit: (event) => {
    event.preventDefault();
    const data = new FormData(form);
    const next = { runs: runs.join(",") };
    for (const [key, value] of data.entries()) if (value) next[key] = value;
    go("pairs", next);
  } },
  field("show", which),
  field("run A", select("a", runOptions, params.get("a") || "")),
  field("run B", select("b", runOptions, params.get("b") || "")),
  field("min words", el("input", { name: "min_words", type: "number", value: params.get("min_words") || "" })),
  field("max words", el("input", { name: "max_words", type: "number", value: params.get("max_words") || "" })),
  field("T2I model", select("model", [["", "any"], ...doc.models.map((m) => [m, m])], params.get("model") || "")),
  field("judge kind", select("kind", [["", "any"], ...kinds.map((k) => [k, k])], params.get("kind") || "")),
  field("rationale contains", el("input", { name: "q", type: "search", value: params.get("q") || "" })),
  field("order", select("sort", [["", "the runs' order"], ...doc.columns.map((c) => [c.label, `${c.label}: most confident mistakes first`])], params.get("sort") || "")),
  el("button", { type: "submit", id: "apply", text: "Apply" }));
  return form;
}

async function viewPairs(params) {
  const doc0 = await runsDoc();
  const runs = selected(params, doc0);
  const query = Object.fromEntries(params.entries());
  query.runs = runs.join(",");
  const doc = await api("pairs", query);
  const table = el("table", { id: "pairs" }, el("tr", {}, ["#", "prompt", "words", "models (A / B)", "people",
    ...doc.columns.map((c) => c.label)].map((h) => el("th", { text: h }))));
  doc.rows.forEach((row, i) => {
    const link = el("a", { href: `#/pair?${new URLSearchParams({ key: row.key, runs: runs.join(",") })}`, "data-key": row.key, text: row.prompt.length > 120 ? row.prompt.slice(0, 117) + "…" : row.prompt });
    table.append(el("tr", { "data-key": row.key },
      el("td", { class: "num", text: (doc.page - 1) * PAGE_SIZE + i + 1 }), el("td", {}, link),
      el("td", { class: "num", text: row.words }), el("td", { text: row.models.join(" / ") }),
      el("td", { "data-field": "people", text: people(row.winner, row.votes) }),
      row.outcomes.map((o, j) => el("td", { class: `outcome-${o || "none"}`, "data-column": doc.columns[j].label, "data-outcome": o || "", title: o || "not in this run", text: o ? SYMBOL[o] : "" }))));
  });
  const pager = el("p", { class: "pager" },
    el("button", { id: "prev", text: "‹ previous", disabled: doc.page <= 1, onclick: () => go("pairs", { ...query, page: doc.page - 1 }) }),
    el("button", { id: "next", text: "next ›", disabled: doc.page >= doc.pages, onclick: () => go("pairs", { ...query, page: doc.page + 1 }) }),
    el("span", { id: "total", "data-total": doc.total, text: `${doc.total} pairs · page ${doc.page} of ${doc.pages}` }));
  return [el("h2", { text: `Pairs of ${runs.join(", ")}` }), filterForm(params, doc, runs),
    el("p", { class: "note", text: "✓ agrees with people · ✗ prefers the other image · = scores tied · ! not scored · ~ people tied" }),
    BUNDLE ? null : queueBox(query, doc.total),
    pager, table];
}

// the current filter's pairs to people: POST /api/queue, then the annotation page
function queueBox(query, total) {
  const result = el("span", { id: "queue-result" });
  const send = async () => {
    result.replaceChildren("sending…");
    try {
      const found = await post("queue", { ...query, page: undefined });
      const q = found.queue;
      const more = q.left_out ? ` (${q.left_out} more left out)` : "";
      result.replaceChildren(
        `${q.pairs} pairs of ${q.prompts} prompts queued, the judges' most split first${more}; ` +
        `${q.answers_already} answers already in ${found.votes}. `,
        el("a", { id: "open-queue", href: annotateUrl(), text: "Open the annotation page" }));
    } catch (error) {
      result.replaceChildren(el("span", { class: "error", text: String(error.message || error) }));
    }
  };
  return el("p", { class: "queue" },
    el("button", { id: "to-queue", text: `Annotate these ${total} pairs`, disabled: !total, onclick: send }), " ", result);
}

function sideCard(side) {
  if (!side || side.status === null) return el("div", { class: "card note", text: "not in this run" });
  const details = side.details && Object.keys(side.details).length ? el("details", {}, el("summary", { text: "details" }), el("pre", { text: JSON.stringify(side.details, null, 2) })) : null;
  return el("div", { class: "card" },
    el("div", {}, el("strong", { "data-field": "score", text: side.score === null ? side.status : num(side.score) }), side.status === "fallback" ? " (from the fallback judge)" : ""),
    side.rationale ? el("div", { class: "rationale", "data-field": "rationale", text: side.rationale }) : null,
    side.error ? el("div", { class: "error", text: side.error }) : null,
    side.answered_by && side.answered_by.length ? el("div", { class: "note", text: `answered by ${side.answered_by.join(", ")}` }) : null,
    details);
}

async function viewPair(params) {
  const doc = await api("pair", { key: params.get("key"), runs: params.get("runs") || "" });
  const images = el("div", { class: "images" }, doc.images.map((image, i) => el("figure", {},
    image.url ? el("img", { src: imageUrl(image.url), alt: `image ${"AB"[i]} (${image.t2i_model})`, class: doc.winner === "ab"[i] ? "winner" : "" })
      : el("p", { class: "error", text: "the image file is not there any more" }),
    el("figcaption", { text: `${"AB"[i]}: ${image.t2i_model}${doc.winner === "ab"[i] ? " — preferred by people" : ""}` }))));
  const runs = doc.runs.map((run) => el("section", { "data-run": run.id },
    el("h3", { text: `${run.id} ${run.label}` }),
    el("div", { class: "side-by-side" }, run.descriptions.map((d, i) => el("div", { class: "card" }, el("h4", { text: `description of ${"AB"[i]}` }), el("div", { class: "rationale", text: d || "none" })))),
    run.variants.map((v) => el("div", { class: "variant", "data-run": run.id, "data-variant": v.name },
      el("h4", { class: `outcome-${v.outcome}`, text: `${v.name} (${v.kind || "?"}): ${v.outcome}` }),
      el("div", { class: "side-by-side" }, v.sides.map(sideCard)),
      v.judged ? v.judged.map((o) => el("div", { class: "card rationale", text: `order ${o.first} then ${o.second}: chose ${o.winner ?? "nothing (failed)"}${o.rationale ? " — " + o.rationale : ""}${o.error ? " — " + o.error : ""}` })) : null))));
  return [el("h2", { text: "Pair" }),
    el("p", { id: "prompt", class: "rationale", text: doc.prompt }),
    el("p", { id: "people", text: doc.votes
      ? `People: ${people(doc.winner, doc.votes)} (votes for A–B; margin ${Math.abs(doc.votes[0] - doc.votes[1])} of ${doc.votes[0] + doc.votes[1] + doc.votes[2]})`
      : (doc.winner === "tie" ? "People: a tie" : `People preferred ${doc.winner.toUpperCase()} (the pairs file keeps no vote counts)`) }),
    images, runs];
}

async function viewItems(params) {
  const doc0 = await runsDoc();
  const run = params.get("run") || selected(params, doc0)[0] || (doc0.runs.find((r) => !r.in_progress && !r.problem) || {}).id;
  const query = { ...Object.fromEntries(params.entries()), run };
  const doc = await api("items", query);
  const form = el("form", { class: "filters", id: "item-filters", onsubmit: (event) => {
    event.preventDefault();
    const next = { run };
    for (const [key, value] of new FormData(form).entries()) if (value) next[key] = value;
    go("items", next);
  } },
  el("label", {}, "run ", el("select", { name: "run" }, doc0.runs.filter((r) => !r.in_progress && !r.problem).map((r) => el("option", { value: r.id, text: `${r.id} ${r.label}`, selected: r.id === run })))),
  el("label", {}, "T2I model ", el("select", { name: "model" }, [["", "any"], ...doc.models.map((m) => [m, m])].map(([v, t]) => el("option", { value: v, text: t, selected: v === (params.get("model") || "") })))),
  el("label", {}, "status ", el("select", { name: "status" }, [["all", "all"], ["failed", "a judge failed"], ["fallback", "from a fallback"]].map(([v, t]) => el("option", { value: v, text: t, selected: v === (params.get("status") || "all") })))),
  el("label", {}, "text contains ", el("input", { name: "q", type: "search", value: params.get("q") || "" })),
  el("button", { type: "submit", id: "apply-items", text: "Apply" }));
  const table = el("table", { id: "items" }, el("tr", {}, ["item", "prompt", "words", "T2I model", ...doc.variants].map((h) => el("th", { text: h }))));
  for (const row of doc.rows) {
    const link = el("a", { href: `#/item?${new URLSearchParams({ run, item: row.item_id })}`, "data-item": row.item_id, text: row.item_id });
    table.append(el("tr", { "data-item": row.item_id }, el("td", {}, link),
      el("td", { text: row.prompt.length > 100 ? row.prompt.slice(0, 97) + "…" : row.prompt }),
      el("td", { class: "num", text: row.words }), el("td", { text: row.t2i_model }),
      row.results.map((r, i) => el("td", { class: r && r.status !== "ok" ? `status-${r.status}` : "num", "data-variant": doc.variants[i],
        text: !r ? "" : r.status === "failed" ? "failed" : num(r.score) + (r.status === "fallback" ? " (fallback)" : "") }))));
  }
  const pager = el("p", { class: "pager" },
    el("button", { id: "prev-items", text: "‹ previous", disabled: doc.page <= 1, onclick: () => go("items", { ...query, page: doc.page - 1 }) }),
    el("button", { id: "next-items", text: "next ›", disabled: doc.page >= doc.pages, onclick: () => go("items", { ...query, page: doc.page + 1 }) }),
    el("span", { id: "items-total", "data-total": doc.total, text: `${doc.total} images · page ${doc.page} of ${doc.pages}` }));
  return [el("h2", { text: `Images of ${doc.run.id} ${doc.run.label}` }), form, pager, table];
}

async function viewItem(params) {
  const doc = await api("item", { run: params.get("run"), item: params.get("item") });
  const image = doc.url ? el("img", { src: imageUrl(doc.url), alt: `${doc.item_id} (${doc.t2i_model})` }) : el("p", { class: "error", text: "the image could not be read" });
  return [el("h2", { text: `${doc.item_id} (${doc.t2i_model}) in ${doc.run.id} ${doc.run.label}` }),
    el("p", { id: "prompt", class: "rationale", text: doc.prompt }),
    el("div", { class: "side-by-side" }, el("figure", {}, image),
      el("div", { class: "card" }, el("h4", { text: "description" }), el("div", { class: "rationale", "data-field": "description", text: doc.description || "none" }))),
    doc.variants.map((v) => el("div", { class: "variant", "data-variant": v.name },
      el("h4", { text: `${v.name} (${v.kind || "?"})` }), sideCard(v)))];
}

function heatColour(accuracy) {
  if (accuracy === null || accuracy === undefined) return "#eee";
  const t = Math.max(0, Math.min(1, (accuracy - 0.5) / 0.3));
  return `hsl(${Math.round(120 * t)}, 60%, 80%)`;
}

function calibrationSvg(points) {
  const ns = "http://www.w3.org/2000/svg";
  const svg = document.createElementNS(ns, "svg");
  svg.setAttribute("width", "220"); svg.setAttribute("height", "160"); svg.setAttribute("class", "calibration");
  if (!points.length) return svg;
  const lo = Math.min(...points.map((p) => p.score)), hi = Math.max(...points.map((p) => p.score));
  for (const p of points) {
    const dot = document.createElementNS(ns, "circle");
    const x = hi > lo ? 10 + 200 * (p.score - lo) / (hi - lo) : 110;
    dot.setAttribute("cx", x.toFixed(1)); dot.setAttribute("cy", (150 - 140 * p.win_rate).toFixed(1)); dot.setAttribute("r", "4");
    dot.setAttribute("fill", "#23395d");
    const title = document.createElementNS(ns, "title");
    title.textContent = `score ${num(p.score)}: people's win rate ${pct(p.win_rate)} over ${p.n} images`;
    dot.append(title); svg.append(dot);
  }
  return svg;
}

async function viewPictures(params) {
  const doc0 = await runsDoc();
  const runs = selected(params, doc0);
  const doc = await api("pictures", { runs: runs.join(","), focus: params.get("focus") || "" });
  const heat = el("table", { id: "heatmap" }, el("tr", {}, el("th", { text: "variant" }), doc.heatmap.runs.map((r) => el("th", { text: `${r.id} ${r.label}` }))),
    doc.heatmap.variants.map((v) => el("tr", {}, el("td", { text: v }), doc.heatmap.cells[v].map((c, i) => {
      const cell = el("td", { class: "num", "data-run": doc.heatmap.runs[i].id, "data-variant": v, text: c ? pct(c.accuracy) + (c.fallback_share && c.fallback_share !== "0%" ? ` (${c.fallback_share} fallback)` : "") : "" });
      cell.style.backgroundColor = heatColour(c ? c.accuracy : null);
      return cell;
    }))));
  const length = el("table", { id: "by-length" }, el("tr", {}, ["prompt length", "variant", "accuracy", "CI", "pairs"].map((h) => el("th", { text: h }))),
    doc.by_length.rows.map((r) => {
      const bar = el("span", { class: "bar" });
      bar.style.width = `${Math.round(120 * (r.pairwise_accuracy || 0))}px`;
      return el("tr", {}, el("td", { text: r.group }), el("td", { text: r.variant }), el("td", { class: "num" }, bar, " ", pct(r.pairwise_accuracy)), el("td", { text: ci(r.ci) }), el("td", { class: "num", text: r.n_pairs }));
    }));
  const board = doc.leaderboard;
  const leader = board ? el("table", { id: "leaderboard" }, el("tr", {}, el("th", { text: "T2I model" }), el("th", { text: "people" }), Object.keys(board.variants).map((v) => el("th", { text: v }))),
    board.models.map((m) => el("tr", {}, el("td", { text: m }), el("td", { class: "num", text: board.human[m] ? board.human[m].rank : "" }),
      Object.values(board.variants).map((s) => el("td", { class: "num", text: s.models[m] ? s.models[m].rank : "" }))))) : el("p", { text: "no leaderboard (no T2I models)" });
  const calibration = el("div", { id: "calibration", class: "images" }, Object.entries(doc.calibration.variants).map(([name, points]) =>
    el("figure", {}, calibrationSvg(points), el("figcaption", { text: `${name}: score (x) against people's win rate (y)` }))));
  const focus = el("select", { id: "focus", onchange: (e) => go("pictures", { runs: runs.join(","), focus: e.target.value }) },
    runs.map((r) => el("option", { value: r, text: r, selected: r === doc.focus.id })));
  return [el("h2", { text: "Pictures" }), el("h3", { text: "Pairwise accuracy, variant × run (Table 4)" }), heat,
    el("p", {}, "The run below: ", focus),
    el("h3", { text: `Accuracy by prompt length: ${doc.focus.label}` }), length,
    el("h3", { text: "T2I model leaderboard (rank)" }), leader,
    el("h3", { text: "Calibration" }), calibration];
}

const VIEWS = { runs: viewRuns, compare: viewCompare, pairs: viewPairs, pair: viewPair, pictures: viewPictures, items: viewItems, item: viewItem };

async function render() {
  const { name, params } = route();
  const main = document.getElementById("main");
  for (const link of document.querySelectorAll("header nav a")) link.classList.toggle("here", link.id === `nav-${name}`);
  const view = VIEWS[name] || viewRuns;
  try {
    const shown = await view(params);
    main.replaceChildren(...[shown].flat(Infinity).filter((n) => n !== null && n !== undefined));
  } catch (error) {
    main.replaceChildren(el("p", { class: "error", id: "error", text: String(error.message || error) }));
  }
  document.body.dataset.ready = window.location.hash || "#/runs";
}

window.addEventListener("hashchange", render);
window.addEventListener("DOMContentLoaded", () => {
  document.getElementById("where").textContent = BUNDLE ? "static copy" : "";
  render();
});
