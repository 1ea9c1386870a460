// titjudge annotate: the annotation page. Text from the server (prompts, names, errors)
// goes in with textContent only; the page loads nothing but this server's own files.
"use strict";
(() => {
  const token = new URLSearchParams(location.search).get("token");
  const NAME_KEY = "titjudge.annotator";
  const $ = (id) => document.getElementById(id);
  let name = "";
  let current = null;
  let shownAt = 0;
  let busy = false;

  function withToken(url) {
    if (!token) return url;
    return url + (url.includes("?") ? "&" : "?") + "token=" + encodeURIComponent(token);
  }

  function storedName() {
    try { return localStorage.getItem(NAME_KEY) || ""; } catch (e) { return ""; }
  }

  function storeName(value) {
    try { localStorage.setItem(NAME_KEY, value); } catch (e) { /* private mode: ask again */ }
  }

  function say(text) { $("message").textContent = text || ""; }

  function setState(value) { document.body.dataset.state = value; }

  async function call(method, path, body) {
    const options = { method, cache: "no-store", headers: { Accept: "application/json" } };
    if (body !== undefined) {
      options.headers["Content-Type"] = "application/json";
      options.body = JSON.stringify(body);
    }
    const response = await fetch(withToken(path), options);
    let data = null;
    try { data = await response.json(); } catch (e) { data = null; }
    if (!response.ok) {
      const error = new Error((data && data.error) || "the server answered " + response.status);
      error.status = response.status;
      throw error;
    }
    return data;
  }

  const fixed = (value) => (value === null || value === undefined ? "n/a" : value.toFixed(2));

  function showAgreement(agreement) {
    if (!agreement) return;
    const shared = agreement.shared_pairs;
    const box = $("agreement");
    box.textContent = shared
      ? "κ " + fixed(agreement.fleiss_kappa) + " (chance " + fixed(agreement.chance) + ", " + shared + " shared)"
      : "κ n/a";
    box.title = shared
      ? "Fleiss' kappa " + fixed(agreement.fleiss_kappa) + ": observed agreement " + fixed(agreement.observed) +
        ", chance agreement (its base rate) " + fixed(agreement.chance) + ", on " + shared +
        " pair(s) voted by two annotators or more"
      : "no pair has two annotators' votes yet";
  }

  function show(state) {
    showAgreement(state.agreement);
    $("progress").textContent = state.done + " / " + state.total;
    $("progress-bar").max = Math.max(state.total, 1);
    $("progress-bar").value = state.done;
    $("undo").disabled = !state.can_undo;
    $("undo-last").disabled = !state.can_undo;
    current = state.pair;
    closeZoom();
    if (!current) {
      $("work").hidden = true;
      $("finished").hidden = false;
      document.body.dataset.pair = "";
      setState("done");
      return;
    }
    $("finished").hidden = true;
    $("work").hidden = false;
    $("prompt-id").textContent = current.prompt_id;
    $("prompt").textContent = current.prompt;
    $("prompt").scrollTop = 0;
    $("left").src = withToken(current.left);
    $("right").src = withToken(current.right);
    document.body.dataset.pair = current.id;
    shownAt = performance.now();
    setState("ready");
  }

  async function run(method, path, body) {
    if (busy) return;
    busy = true;
    setState("busy");
    try {
      show(await call(method, path, body));
      say("");
    } catch (error) {
      say(error.message);
      if (error.status === 409) {
        try { show(await call("GET", "api/next?annotator=" + encodeURIComponent(name))); } catch (e) { say(e.message); }
      } else {
        setState(current ? "ready" : "error");
      }
    } finally {
      busy = false;
    }
  }

  function answer(choice) {
    if (!current || busy) return;
    const seconds = Math.round(performance.now() - shownAt) / 1000;
    run("POST", "api/answer", { annotator: name, pair: current.id, answer: choice, seconds });
  }

  function undo() { run("POST", "api/undo", { annotator: name }); }

  async function start(value) {
    name = value;
    storeName(value);
    $("who").textContent = value;
    $("name-form").hidden = true;
    await run("GET", "api/next?annotator=" + encodeURIComponent(value));
    if (document.body.dataset.state === "error") askName();  // e.g. a name the server refused
  }

  function askName() {
    $("work").hidden = true;
    $("finished").hidden = true;
    $("name-form").hidden = false;
    $("name-input").value = name;
    $("name-input").focus();
    setState("name");
  }

  function openZoom(image) {
    $("zoom-img").src = image.src;
    $("zoom").hidden = false;
  }

  function closeZoom() { $("zoom").hidden = true; }

  const KEYS = { ArrowLeft: "left", 1: "left", ArrowRight: "right", 2: "right", ArrowDown: "tie", 0: "tie" };

  document.addEventListener("keydown", (event) => {
    if (event.repeat || event.altKey || event.metaKey || (event.ctrlKey && event.key !== "z")) return;
    if (!$("name-form").hidden || event.target instanceof HTMLInputElement) return;
    if (event.key === "Escape") { closeZoom(); return; }
    if (event.ctrlKey || event.key === "u" || event.key === "U") { event.preventDefault(); undo(); return; }
    if (event.key === "s" || event.key === "S") { event.preventDefault(); answer("skip"); return; }
    const choice = KEYS[event.key];
    if (choice) { event.preventDefault(); answer(choice); }
  });

  document.addEventListener("DOMContentLoaded", () => {
    $("status-link").href = withToken("status");
    if (location.pathname.startsWith("/annotate/")) {  // the workbench's annotation view
      $("workbench-link").href = withToken("../#/pairs");
      $("workbench-link").hidden = false;
    }
    $("vote-left").addEventListener("click", () => answer("left"));
    $("vote-right").addEventListener("click", () => answer("right"));
    $("vote-tie").addEventListener("click", () => answer("tie"));
    $("skip").addEventListener("click", () => answer("skip"));
    $("undo").addEventListener("click", undo);
    $("undo-last").addEventListener("click", undo);
    $("rename").addEventListener("click", askName);
    $("left").addEventListener("click", (event) => openZoom(event.target));
    $("right").addEventListener("click", (event) => openZoom(event.target));
    $("zoom").addEventListener("click", closeZoom);
    $("name-form").addEventListener("submit", (event) => {
      event.preventDefault();
      const value = $("name-input").value.trim();
      if (value) start(value); else say("enter a name");
    });
    const known = storedName();
    if (known) start(known); else askName();
  });
})();
