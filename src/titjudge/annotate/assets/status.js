// titjudge annotate: the status page (names are put in as text only).
"use strict";
(() => {
  const token = new URLSearchParams(location.search).get("token");
  const withToken = (url) => (token ? url + "?token=" + encodeURIComponent(token) : url);
  const $ = (id) => document.getElementById(id);
  const fixed = (value, digits) => (value === null ? "n/a" : value.toFixed(digits));
  const percent = (value) => (value === null ? "n/a" : Math.round(value * 100) + "%");

  function cell(row, text) {
    const td = document.createElement("td");
    td.textContent = String(text);
    row.appendChild(td);
  }

  function show(status) {
    const body = $("annotators");
    body.replaceChildren();
    for (const person of status.annotators) {
      const row = document.createElement("tr");
      row.dataset.annotator = person.name;
      for (const value of [person.name, person.votes, person.a, person.b, person.tie, person.skip]) cell(row, value);
      cell(row, percent(person.left_share));
      cell(row, fixed(person.median_seconds, 1));
      body.appendChild(row);
    }
    const summary = $("summary");
    summary.replaceChildren();
    const rules = status.rules;
    const lines = [
      ["pairs voted", status.pairs_voted],
      ["shared pairs", status.shared_pairs],
      ["Krippendorff's alpha (nominal)", fixed(status.krippendorff_alpha, 3)],
      ["Fleiss' kappa", fixed(status.fleiss_kappa, 3)],
      ["observed agreement", fixed(status.observed_agreement, 3)],
      ["chance agreement (kappa's base rate)", fixed(status.chance_agreement, 3)],
      ["paper's rules", "strong " + rules.strong + ", advantage " + rules.advantage + ", need experts " + rules.unresolved],
    ];
    for (const [term, value] of lines) {
      const dt = document.createElement("dt");
      dt.textContent = term;
      const dd = document.createElement("dd");
      dd.textContent = String(value);
      summary.append(dt, dd);
    }
    document.body.dataset.state = "ready";
  }

  async function refresh() {
    try {
      const response = await fetch(withToken("api/status"), { cache: "no-store" });
      if (!response.ok) throw new Error("the server answered " + response.status);
      show(await response.json());
      $("message").textContent = "";
    } catch (error) {
      $("message").textContent = error.message;
    }
  }

  document.addEventListener("DOMContentLoaded", () => {
    $("back").href = withToken("./");
    refresh();
    setInterval(refresh, 5000);
  });
})();
