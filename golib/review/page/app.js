// The review page of screen_review(). Every text of a record is put into the page as text
// (textContent, text nodes), never as markup: titles and abstracts come from databases and may
// hold anything. A decision is shown as saved only once the app has committed it to the answer
// store; until then it waits in this browser's storage and is sent again when the app is back.
"use strict";

(function () {
  const QUEUES = [
    { id: "check", label: "Check" },
    { id: "disagreements", label: "Disagreements" },
    { id: "audit", label: "Audit" },
    { id: "all", label: "All" },
    { id: "conflicts", label: "Conflicts" },
  ];
  const DECISION_CLASS = { Include: "include", Exclude: "exclude", Unsure: "unsure" };
  const MAX_SECONDS = 1800;

  const params = new URLSearchParams(location.search);
  const S = {
    token: params.get("token") || "",
    runId: "",
    store: "",
    meta: {},
    items: [],
    byKey: new Map(),
    confirmed: new Map(), // key -> Map(reviewer -> decision): what the app said it holds
    decisions: new Map(), // the same with the decisions still waiting on top: what the page shows
    reviewer: "",
    queue: "check",
    list: [],
    pos: 0,
    visibleMs: 0,
    shownAt: performance.now(),
    pendingNotes: {},
    flushing: null, // the promise of the sending under way
    inFlight: null, // the id of the decision being sent
    lastMade: 0,
    answers: 0, // counts the app's answers that changed S.confirmed
    refreshTimer: null,
    online: true,
    finished: false,
    retryTimer: null,
    regexCache: new Map(),
  };

  const $ = (id) => document.getElementById(id);
  const keyOf = (studyid, group) => group + "\u001f" + studyid;
  const itemKey = (it) => keyOf(it.studyid, it.group);

  // el("p", {class: "x"}, "text", childNode, ...): strings become text nodes.
  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === null || v === undefined || v === false) continue;
      if (k === "class") node.className = v;
      else node.setAttribute(k, v === true ? "" : String(v));
    }
    for (const c of children.flat(Infinity)) {
      if (c === null || c === undefined || c === false) continue;
      node.appendChild(typeof c === "string" || typeof c === "number" ? document.createTextNode(String(c)) : c);
    }
    return node;
  }

  // Node.append() would put null in as the text "null".
  function append(node, ...children) {
    for (const c of children.flat(Infinity)) if (c !== null && c !== undefined && c !== false) node.append(c);
    return node;
  }

  // ---- storage of what has not reached the app yet ---------------------------------------------

  const storageKey = (what) => "tabscreen-review:" + S.runId + ":" + what;
  function load(what, fallback) {
    try {
      const v = localStorage.getItem(storageKey(what));
      return v === null ? fallback : JSON.parse(v);
    } catch (e) {
      return fallback;
    }
  }
  function save(what, value) {
    try {
      localStorage.setItem(storageKey(what), JSON.stringify(value));
    } catch (e) {
      /* storage full or off: the reviewer and queue are in the URL too */
    }
  }

  // Each decision waits under a key of its own until the app has it, so that the tabs of this
  // browser (two reviewers, or a tab left open and the one screen_review() opens after a restart)
  // add to the waiting decisions without writing over each other's. Any tab sends any of them;
  // the id, made with the decision, lets the app store it once however many tabs send it.
  const pendingPrefix = () => "tabscreen-pending-" + S.runId + "-";
  const unstored = new Map(); // id -> decision, when this browser's storage refused it

  function newId() {
    if (window.crypto && crypto.randomUUID) return crypto.randomUUID();
    return Date.now().toString(36) + "-" + Math.random().toString(36).slice(2) + Math.random().toString(36).slice(2);
  }

  // A decision to wait: its id, its run, and when it was made, which orders the waiting ones.
  function waiting(d) {
    S.lastMade = Math.max(Date.now(), S.lastMade + 1);
    return Object.assign({}, d, { id: newId(), run: S.runId, made: S.lastMade });
  }

  function putPending(d) {
    try {
      localStorage.setItem(pendingPrefix() + d.id, JSON.stringify(d));
    } catch (e) {
      unstored.set(d.id, d); // storage full or off: it waits in this tab
    }
  }

  function dropPending(id) {
    unstored.delete(id);
    try {
      localStorage.removeItem(pendingPrefix() + id);
    } catch (e) {
      /* storage off: nothing there */
    }
  }

  // Every tab's waiting decisions of this run, oldest first.
  function pending() {
    const out = new Map(unstored);
    const prefix = pendingPrefix();
    try {
      for (let i = 0; i < localStorage.length; i++) {
        const k = localStorage.key(i);
        if (!k || !k.startsWith(prefix)) continue;
        let d = null;
        try {
          d = JSON.parse(localStorage.getItem(k));
        } catch (e) {
          continue;
        }
        // Run "a"'s prefix also starts run "a-b"'s keys: the decision says whose it is.
        if (d && d.run === S.runId && prefix + d.id === k && S.byKey.has(keyOf(d.studyid, d.group))) out.set(d.id, d);
      }
    } catch (e) {
      /* storage off */
    }
    return Array.from(out.values()).sort((a, b) => a.made - b.made || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  }

  // ---- talking to the app ----------------------------------------------------------------------

  async function api(path, body) {
    const init = { headers: { "X-Tabscreen-Token": S.token }, cache: "no-store" };
    if (body !== undefined) {
      init.method = "POST";
      init.headers["Content-Type"] = "application/json";
      init.body = JSON.stringify(body);
    }
    let resp;
    try {
      resp = await fetch(path, init);
    } catch (e) {
      const err = new Error("The app is not running.");
      err.offline = true;
      throw err;
    }
    let out = {};
    try {
      out = await resp.json();
    } catch (e) {
      /* an empty or foreign answer */
    }
    if (!resp.ok) {
      const err = new Error(out.error || "The app answered " + resp.status + ".");
      err.status = resp.status;
      throw err;
    }
    return out;
  }

  function put(map, d, isPending) {
    const k = keyOf(d.studyid, d.group);
    if (!map.has(k)) map.set(k, new Map());
    map.get(k).set(d.reviewer, Object.assign({}, d, { pending: isPending }));
  }
  function confirmed(d) {
    S.answers++;
    put(S.confirmed, d, false);
  }
  function unconfirmed(studyid, group, reviewer) {
    S.answers++;
    const m = S.confirmed.get(keyOf(studyid, group));
    if (m) m.delete(reviewer);
  }
  // What the page shows: what the app holds, with the decisions still waiting on top.
  function rebuild() {
    S.decisions = new Map();
    for (const [k, m] of S.confirmed) S.decisions.set(k, new Map(m));
    for (const d of pending()) put(S.decisions, d, true);
  }
  function mine(it) {
    const m = S.decisions.get(itemKey(it));
    return m ? m.get(S.reviewer) : undefined;
  }

  function applyServerDecisions(list) {
    S.confirmed = new Map();
    for (const d of list) confirmed(d);
    rebuild();
  }

  function flush() {
    if (!S.flushing) {
      S.flushing = sendWaiting().finally(() => {
        S.flushing = null;
        S.inFlight = null;
        renderProgress();
        renderCardDecision();
      });
    }
    return S.flushing;
  }

  async function sendWaiting() {
    for (let d = pending()[0]; d; d = pending()[0]) {
      S.inFlight = d.id;
      showStatus("saving");
      let out;
      try {
        out = await api("/api/decide", {
          id: d.id, studyid: d.studyid, group: d.group, reviewer: d.reviewer, decision: d.decision,
          note: d.note || "", seconds: d.seconds || 0, queue: d.queue,
        });
      } catch (e) {
        // Not running, failing, or another app on its port (another run's token): wait for it.
        if (e.offline || e.status >= 500 || e.status === 403) {
          goOffline();
          return;
        }
        // The app refused it (a record it does not know): no retry will change that.
        dropPending(d.id);
        rebuild();
        banner("A decision was refused by the app: " + e.message);
        continue;
      }
      dropPending(d.id);
      // The reviewer's decision now: this one, or, for a decision the app had already (another
      // tab sent it), what followed it there.
      if (out.decision) confirmed(out.decision);
      else unconfirmed(d.studyid, d.group, d.reviewer);
      rebuild();
      goOnline();
    }
    showStatus("saved");
  }

  function goOffline() {
    S.online = false;
    showStatus("offline");
    const n = pending().length;
    banner("Not saved: the app is not running. " + (n === 1 ? "1 decision is" : n + " decisions are") +
      " kept in this browser and sent as soon as the app is back (run screen_review() again in R).");
    clearTimeout(S.retryTimer);
    S.retryTimer = setTimeout(reconnect, 2000);
  }

  function goOnline() {
    if (!S.online) {
      S.online = true;
      banner(null);
    }
  }

  async function reconnect() {
    try {
      const st = await api("/api/state");
      goOnline();
      applyServerDecisions(st.decisions || []);
      await flush();
      render();
    } catch (e) {
      S.retryTimer = setTimeout(reconnect, 2000);
    }
  }

  // Another tab of this browser made, sent or took back a waiting decision: show what waits now,
  // and, for one that left, ask the app what it holds (the other tab may have sent it).
  function onStorage(e) {
    if (!S.runId || S.finished || (e.key !== null && !e.key.startsWith(pendingPrefix()))) return;
    rebuild();
    renderTop();
    renderProgress();
    renderCardDecision();
    if (!S.online) showStatus("offline"); // its count of waiting decisions
    if (S.online && e.newValue === null) {
      clearTimeout(S.refreshTimer);
      S.refreshTimer = setTimeout(refresh, 300);
    }
  }

  async function refresh() {
    // A state asked for before an answer to this tab's own sending or undo is older than it.
    const seen = S.answers;
    let st;
    try {
      st = await api("/api/state");
    } catch (e) {
      return; // the next click or reconnect tells
    }
    if (S.flushing || S.answers !== seen) {
      S.refreshTimer = setTimeout(refresh, 300);
      return;
    }
    applyServerDecisions(st.decisions || []);
    renderTop();
    renderProgress();
    renderCardDecision();
  }

  // ---- queues ----------------------------------------------------------------------------------

  function isConflict(it) {
    const m = S.decisions.get(itemKey(it));
    if (!m || m.size < 2) return false;
    const values = new Set(Array.from(m.values(), (d) => d.decision));
    return values.size > 1;
  }

  function queueItems(q) {
    if (q === "all") return S.items;
    if (q === "conflicts") return S.items.filter(isConflict);
    const out = S.items.filter((it) => (it.queues || []).includes(q));
    if (q === "audit") out.sort((a, b) => (a.audit_rank || 0) - (b.audit_rank || 0));
    return out;
  }

  // The URL keeps the reviewer and the queue, so that a reload shows the same.
  function setParam(name, value) {
    params.set(name, value);
    history.replaceState(null, "", location.pathname + "?" + params.toString());
  }

  function selectQueue(q, keepKey) {
    S.queue = q;
    save("queue", q);
    setParam("queue", q);
    S.list = queueItems(q);
    const stored = keepKey || load("pos:" + S.reviewer + ":" + q, null);
    let pos = stored ? S.list.findIndex((it) => itemKey(it) === stored) : -1;
    // A conflict is decided by both reviewers already: its queue starts at the top.
    if (pos < 0) pos = q === "conflicts" ? 0 : nextUndecided(-1);
    S.pos = pos < 0 ? S.list.length : pos;
    startClock();
    render();
  }

  function nextUndecided(from) {
    const n = S.list.length;
    for (let i = 1; i <= n; i++) {
      const j = (from + i + n) % n;
      if (!mine(S.list[j])) return j;
    }
    return -1;
  }

  function current() {
    return S.pos >= 0 && S.pos < S.list.length ? S.list[S.pos] : null;
  }

  function go(pos) {
    S.pos = Math.max(0, Math.min(pos, S.list.length));
    const it = current();
    if (it) save("pos:" + S.reviewer + ":" + S.queue, itemKey(it));
    startClock();
    render();
    window.scrollTo(0, 0);
  }

  // ---- time on a record (only while the page is visible) ---------------------------------------

  function startClock() {
    S.visibleMs = 0;
    S.shownAt = performance.now();
  }
  document.addEventListener("visibilitychange", () => {
    if (document.visibilityState === "hidden") S.visibleMs += performance.now() - S.shownAt;
    else S.shownAt = performance.now();
  });
  function secondsOnRecord() {
    const ms = S.visibleMs + (document.visibilityState === "hidden" ? 0 : performance.now() - S.shownAt);
    return Math.min(MAX_SECONDS, Math.round(ms / 100) / 10);
  }

  // ---- actions ---------------------------------------------------------------------------------

  function decide(value) {
    const it = current();
    if (!it || S.finished) return;
    const k = itemKey(it);
    const before = mine(it);
    const note = k in S.pendingNotes ? S.pendingNotes[k] : (before ? before.note : "");
    delete S.pendingNotes[k];
    putPending(waiting({
      studyid: it.studyid, group: it.group, reviewer: S.reviewer, decision: value, note: note || "",
      seconds: secondsOnRecord(), queue: S.queue, decided_at: new Date().toISOString(),
    }));
    rebuild();
    flush();
    if (S.queue === "conflicts") {
      // A settled conflict leaves the queue, and the next one moves into its place.
      S.list = queueItems("conflicts");
      const still = S.list.findIndex((x) => itemKey(x) === k);
      go(still >= 0 ? still + 1 : Math.min(S.pos, S.list.length));
      return;
    }
    const next = nextUndecided(S.pos);
    go(next < 0 ? S.list.length : next);
  }

  function saveNote(text) {
    const it = current();
    if (!it) return;
    const d = mine(it);
    if (!d) {
      S.pendingNotes[itemKey(it)] = text;
      render();
      return;
    }
    putPending(waiting({
      studyid: it.studyid, group: it.group, reviewer: S.reviewer, decision: d.decision, note: text,
      seconds: d.seconds || 0, queue: d.queue || S.queue, decided_at: new Date().toISOString(),
    }));
    rebuild();
    flush();
    render();
  }

  async function undo() {
    if (S.finished) return;
    // The reviewer's last decision still waiting in this browser is taken back here: the app
    // never saw it. One on its way to the app is let arrive, and undone there.
    const last = pending().filter((d) => d.reviewer === S.reviewer).pop();
    if (last && last.id === S.inFlight && S.flushing) {
      await S.flushing;
      return undo();
    }
    if (last) {
      dropPending(last.id);
      rebuild();
      showUndone(last.studyid, last.group);
      if (pending().length === 0) showStatus(S.online ? "saved" : "offline");
      return;
    }
    if (!S.online) {
      banner("Undo needs the app: it is not running.");
      return;
    }
    showStatus("saving");
    try {
      const out = await api("/api/undo", { reviewer: S.reviewer });
      showStatus("saved");
      const u = out.undone;
      if (!u) {
        flash("Nothing to undo.");
        return;
      }
      if (u.now) confirmed(u.now);
      else unconfirmed(u.studyid, u.group, S.reviewer);
      rebuild();
      showUndone(u.studyid, u.group);
    } catch (e) {
      if (e.offline) goOffline();
      else banner("Undo failed: " + e.message);
    }
  }

  function showUndone(studyid, group) {
    S.list = queueItems(S.queue);
    let pos = S.list.findIndex((it) => it.studyid === studyid && it.group === group);
    if (pos < 0) {
      // The record is in another queue: show it in All.
      S.queue = "all";
      save("queue", "all");
      setParam("queue", "all");
      S.list = queueItems("all");
      pos = S.list.findIndex((it) => it.studyid === studyid && it.group === group);
    }
    flash("Undone.");
    go(pos < 0 ? S.pos : pos);
  }

  async function finish() {
    if (S.finished) return;
    if (pending().length > 0) {
      flush();
      banner("Some decisions are not saved yet; Finish once the status says Saved.");
      return;
    }
    try {
      await api("/api/finish", {});
    } catch (e) {
      if (!e.offline) {
        banner("Finish failed: " + e.message);
        return;
      }
    }
    S.finished = true;
    showStatus("finished");
    const n = Array.from(S.decisions.values()).filter((m) => m.has(S.reviewer)).length;
    const card = $("card");
    card.className = "card empty";
    card.replaceChildren(
      el("h1", null, "Review finished"),
      el("p", null, n + " decision" + (n === 1 ? "" : "s") + " by " + S.reviewer + " are in the answer store:"),
      el("p", null, el("code", null, S.store)),
      el("p", null, "R has them now (screen_review() returns them; screen_review_decisions() reads them at any time). You can close this tab.")
    );
    $("bar").hidden = true;
  }

  // ---- rendering -------------------------------------------------------------------------------

  let flashTimer = null;
  function flash(text) {
    const s = $("status");
    s.textContent = text;
    clearTimeout(flashTimer);
    flashTimer = setTimeout(() => showStatus(pending().length ? (S.online ? "saving" : "offline") : "saved"), 1500);
  }

  function showStatus(kind) {
    const s = $("status");
    s.className = "status " + kind;
    s.textContent = {
      saved: "\u2713 Saved",
      saving: "Saving\u2026",
      offline: "Not saved: app not running (" + pending().length + " waiting)",
      finished: "Finished",
      loading: "Loading\u2026",
    }[kind] || kind;
  }

  function banner(text, info) {
    const b = $("banner");
    if (!text) {
      b.hidden = true;
      b.textContent = "";
      return;
    }
    b.className = "banner" + (info ? " info" : "");
    b.textContent = text;
    b.hidden = false;
  }

  function render() {
    renderTop();
    renderProgress();
    renderCard();
  }

  function renderTop() {
    $("run").textContent = "\u00b7 " + (S.meta.title || S.runId);
    $("reviewer").textContent = S.reviewer;
    const nav = $("queues");
    nav.replaceChildren(...QUEUES.map((q, i) => {
      const n = queueItems(q.id).length;
      const b = el("button", { type: "button", "data-queue": q.id, "aria-current": q.id === S.queue ? "true" : "false",
        title: "Queue " + q.label + " (" + (i + 1) + ")" }, el("kbd", null, String(i + 1)), q.label, el("span", { class: "n" }, String(n)));
      b.addEventListener("click", () => selectQueue(q.id));
      return b;
    }));
  }

  function median(xs) {
    if (xs.length === 0) return null;
    const s = xs.slice().sort((a, b) => a - b);
    const m = Math.floor(s.length / 2);
    return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
  }

  function duration(sec) {
    if (sec < 1) return "under 1 s";
    if (sec < 90) return Math.round(sec) + " s";
    if (sec < 5400) return Math.round(sec / 60) + " min";
    return (sec / 3600).toFixed(1) + " h";
  }

  function renderProgress() {
    const total = S.list.length;
    const done = S.list.filter((it) => mine(it)).length;
    $("progress-fill").style.width = total ? (100 * done / total).toFixed(1) + "%" : "0";
    const secs = [];
    for (const m of S.decisions.values()) {
      const d = m.get(S.reviewer);
      if (d && d.seconds > 0) secs.push(d.seconds);
    }
    const per = median(secs);
    const parts = [];
    if (S.queue === "conflicts") {
      parts.push(total === 0 ? "No conflicts" : total + (total === 1 ? " conflict" : " conflicts") + " between reviewers");
    } else {
      parts.push(done + " of " + total + " decided");
      if (per !== null) {
        parts.push(duration(per) + " per record");
        if (total > done) parts.push("about " + duration(per * (total - done)) + " to go");
      }
    }
    if (S.queue === "audit" && S.meta.audit) {
      const found = S.list.filter((it) => {
        const d = mine(it);
        return d && d.decision === "Include";
      }).length;
      parts.push(found + (found === 1 ? " include" : " includes") + " found");
    }
    $("progress-text").textContent = parts.join(" \u00b7 ");
  }

  function pill(text, cls, extra) {
    return el("span", Object.assign({ class: "pill " + (cls || "") }, extra || {}), text);
  }

  function verdictClass(it) {
    if (it.failed) return "none";
    if (it.verdict === "Check") return "check";
    return it.model_num === 1 ? "include" : it.model_num === 0 ? "exclude" : "none";
  }

  function termRegex(promptid) {
    const k = String(promptid);
    if (S.regexCache.has(k)) return S.regexCache.get(k);
    const terms = ((S.meta.terms || {})[k] || []).filter((t) => typeof t === "string" && t.length > 1);
    let re = null;
    if (terms.length > 0) {
      const alt = terms.map((t) => t.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")).join("|");
      try {
        re = new RegExp("(?<![\\p{L}\\p{N}])(?:" + alt + ")[\\p{L}\\p{N}]*", "giu");
      } catch (e) {
        re = null;
      }
    }
    S.regexCache.set(k, re);
    return re;
  }

  // The text with the prompt's terms in <mark>; every piece is a text node.
  function highlighted(text, promptid) {
    const re = termRegex(promptid);
    const out = [];
    if (!re) return [text];
    re.lastIndex = 0;
    let last = 0;
    let m;
    while ((m = re.exec(text)) !== null) {
      if (m[0].length === 0) {
        re.lastIndex++;
        continue;
      }
      if (m.index > last) out.push(text.slice(last, m.index));
      out.push(el("mark", null, m[0]));
      last = m.index + m[0].length;
    }
    if (last < text.length) out.push(text.slice(last));
    return out;
  }

  const blank = (x) => x === null || x === undefined || String(x).trim() === "";

  function groupLabel(it) {
    const bits = [];
    if (!blank(it.promptid)) bits.push("prompt " + it.promptid);
    if (!blank(it.model)) bits.push(it.model + (!blank(it.submodel) && it.submodel !== it.model ? " (" + it.submodel + ")" : ""));
    if (!blank(it.top_p)) bits.push("top_p " + it.top_p);
    return bits.map((b, i) => [i > 0 ? " \u00b7 " : null, el("span", { class: "bit" }, b)]);
  }

  function probability(it) {
    const box = el("div", { class: "prob" }, el("span", { class: "label" }, "Inclusion probability"));
    if (it.failed || it.incl_p === null || it.incl_p === undefined) {
      box.appendChild(pill("no answer", "none"));
      const why = it.reps > 1 ? "all " + it.reps + " answers failed" : "the request failed";
      box.appendChild(el("span", { class: "pnote" }, why));
      return box;
    }
    const p = Number(it.incl_p);
    const single = !(it.reps > 1);
    if (single) {
      box.appendChild(el("span", { class: "pval" }, p.toFixed(2)));
      box.appendChild(el("span", { class: "pnote" }, "one answer: its decision"));
      return box;
    }
    const fill = el("span", { class: "fill" });
    fill.style.width = (100 * Math.max(0, Math.min(1, p))).toFixed(1) + "%";
    const bar = el("div", { class: "bar-p", role: "img", "aria-label": "Inclusion probability " + p.toFixed(2) }, fill);
    const cut = S.meta.cutoffs;
    const cuts = cut ? Array.from(new Set([cut.lower, cut.upper].filter((c) => typeof c === "number"))) : [];
    for (const c of cuts) {
      const t = el("span", { class: "tick", title: "cut-off " + c });
      t.style.left = (100 * c).toFixed(1) + "%";
      bar.appendChild(t);
    }
    box.appendChild(el("div", { class: "prob-row" }, el("span", { class: "pval" }, p.toFixed(2)), bar));
    const answered = it.reps - (it.n_mis || 0);
    let note = Math.round(p * answered) + " of " + answered + " answers include";
    if (it.n_mis > 0) note += "; " + it.n_mis + " failed";
    if (cuts.length) note += " \u00b7 marks: cut-off" + (cuts.length > 1 ? "s " : " ") + cuts.join(" and ");
    box.appendChild(el("span", { class: "pnote" }, note));
    return box;
  }

  function humanBox(it) {
    if (!S.meta.human_column) return null;
    const h = it.human;
    return el("div", null, el("span", { class: "label" }, "Earlier human ", el("span", { class: "column" }, S.meta.human_column)),
      h === 1 ? pill("Include", "include") : h === 0 ? pill("Exclude", "exclude") : pill("none", "none"));
  }

  function yourBox(it) {
    const d = mine(it);
    const box = el("div", { class: "yours" }, el("span", { class: "label" }, "Your decision"));
    if (!d) box.appendChild(pill("not yet", "none"));
    else box.appendChild(pill(d.decision + (d.pending ? " (not saved yet)" : ""), DECISION_CLASS[d.decision] + (d.pending ? " pending" : ""),
      { "data-decision": d.decision, "data-pending": d.pending ? "true" : "false" }));
    return box;
  }

  function othersBox(it) {
    const m = S.decisions.get(itemKey(it));
    if (S.queue !== "conflicts" || !m) return null;
    const box = el("div", { class: "others-box" }, el("span", { class: "label" }, "Reviewers"));
    const list = el("div", { class: "others" });
    for (const [who, d] of m) {
      list.appendChild(el("span", null, who + ": ", pill(d.decision, DECISION_CLASS[d.decision])));
    }
    box.appendChild(list);
    return box;
  }

  function explanation(it) {
    const sec = el("section", { class: "explanation" }, el("h2", null, "Model\u2019s explanation" + ((it.explanations || []).length > 1 ? "s" : "")));
    const ex = (it.explanations || []).filter((e) => !blank(e.text));
    if (ex.length === 0) {
      sec.appendChild(el("p", { class: "missing" }, S.meta.has_explanation ? "The model gave no explanation for this record."
        : "No explanation recorded: the screening ran without decision_description = TRUE."));
      return sec;
    }
    if (ex.length === 1) {
      sec.appendChild(el("p", { class: "text" }, ex[0].text));
      return sec;
    }
    const labels = { "1": ["Include", "include"], "0": ["Exclude", "exclude"], "1.1": ["Uncertain", "unsure"] };
    sec.appendChild(el("ol", null, ex.map((e) => {
      const l = labels[e.decision] || [e.decision || "?", "none"];
      return el("li", null, pill(l[0], l[1]), el("span", { class: "text" }, e.text));
    })));
    return sec;
  }

  function emptyCard(card) {
    const q = QUEUES.find((x) => x.id === S.queue);
    const why = {
      check: "The model flagged no record for checking (verdict Check, an uncertain answer, or no answer).",
      disagreements: S.meta.human_column ? "The model agrees with every earlier human decision."
        : "Give screen_review() the column of earlier human decisions (human_decision = ...) to review where the model disagrees with them.",
      audit: S.meta.audit ? "The model excluded no record." : "Start screen_review() with audit = 50 (and a seed) to draw a random sample of the model\u2019s Excludes to check.",
      all: "The screening has no records.",
      conflicts: "No record has different decisions from two reviewers.",
    }[S.queue];
    card.className = "card empty";
    append(card, el("h1", null, "The " + q.label + " queue is empty"), el("p", null, why),
      el("p", null, "Press 1\u20135 for another queue."));
  }

  function doneCard(card) {
    const q = QUEUES.find((x) => x.id === S.queue);
    const counts = { Include: 0, Exclude: 0, Unsure: 0 };
    for (const it of S.list) {
      const d = mine(it);
      if (d) counts[d.decision]++;
    }
    card.className = "card empty done";
    append(card,
      el("h1", null, S.queue === "conflicts" ? "No conflicts left" : "Every record of the " + q.label + " queue has your decision"),
      el("p", null, counts.Include + " Include \u00b7 " + counts.Exclude + " Exclude \u00b7 " + counts.Unsure + " Unsure"),
      el("p", null, "Press \u2190 to go back, 1\u20135 for another queue, or Finish to return the decisions to R.")
    );
  }

  function renderCard() {
    const card = $("card");
    card.replaceChildren();
    card.removeAttribute("data-studyid");
    if (S.list.length === 0) return emptyCard(card);
    const it = current();
    if (!it) return doneCard(card);
    card.className = "card v-" + verdictClass(it).replace("none", "check");
    card.setAttribute("data-studyid", it.studyid);
    const tags = [];
    if ((it.queues || []).includes("audit")) tags.push(el("span", { class: "tag audit" }, "Audit #" + it.audit_rank));
    if ((it.queues || []).includes("check")) tags.push(el("span", { class: "tag" }, "Check"));
    append(card,
      el("p", { class: "print-who" }, "Reviewer " + S.reviewer + " \u00b7 queue " + S.queue),
      el("p", { class: "card-top" }, el("span", { class: "pos" }, (S.pos + 1) + " / " + S.list.length),
        el("span", { class: "studyid" }, "Study " + it.studyid), tags),
      el("h1", { class: "title" }, blank(it.title) ? "(no title)" : highlighted(String(it.title), it.promptid)),
      blank(it.author) ? null : el("p", { class: "author" }, String(it.author)),
      el("p", { class: "meta" }, groupLabel(it)),
      el("div", { class: "decisions" },
        el("div", null, el("span", { class: "label" }, "Model"), pill(it.failed ? "no decision" : (it.verdict || "?"), verdictClass(it))),
        probability(it), humanBox(it), othersBox(it), yourBox(it)),
      el("section", { class: "abstract" }, el("h2", null, "Abstract"),
        blank(it.abstract) ? el("p", { class: "missing" }, "No abstract.") : el("p", { class: "text" }, highlighted(String(it.abstract), it.promptid))),
      explanation(it),
      noteShown(it),
      promptBox(it)
    );
    renderButtons();
  }

  function noteShown(it) {
    const k = itemKey(it);
    const d = mine(it);
    const text = k in S.pendingNotes ? S.pendingNotes[k] : d ? d.note : "";
    if (blank(text)) return null;
    return el("p", { class: "note-shown" }, el("strong", null, "Your note: "), text,
      k in S.pendingNotes ? " (saved with your decision)" : "");
  }

  function promptBox(it) {
    const text = (S.meta.prompts || {})[String(it.promptid)];
    if (blank(text)) return null;
    return el("details", { class: "prompt" }, el("summary", null, "Prompt" + (blank(it.promptid) ? "" : " " + it.promptid)),
      el("p", { class: "text" }, String(text)));
  }

  function renderCardDecision() {
    const it = current();
    if (!it) return;
    const old = document.querySelector("#card .yours");
    if (old) old.replaceWith(yourBox(it));
    renderButtons();
  }

  function renderButtons() {
    const it = current();
    const d = it ? mine(it) : null;
    for (const b of document.querySelectorAll("[data-decide]")) {
      b.classList.toggle("chosen", !!d && d.decision === b.getAttribute("data-decide"));
      b.disabled = !it;
    }
  }

  // ---- dialogs ---------------------------------------------------------------------------------

  function openDialog(id, focus) {
    $(id).hidden = false;
    if (focus) {
      $(focus).focus();
      if ($(focus).select) $(focus).select();
    }
  }
  function closeDialogs() {
    for (const id of ["note-box", "reviewer-box", "help"]) $(id).hidden = true;
  }
  const dialogOpen = () => ["note-box", "reviewer-box", "help"].some((id) => !$(id).hidden);

  function openNote() {
    const it = current();
    if (!it) return;
    const k = itemKey(it);
    const d = mine(it);
    $("note-text").value = k in S.pendingNotes ? S.pendingNotes[k] : d ? d.note || "" : "";
    $("note-pending").hidden = !!d;
    openDialog("note-box", "note-text");
  }

  function setReviewer(name) {
    name = (name || "").trim().slice(0, 100);
    if (!name) return false;
    S.reviewer = name;
    save("reviewer", name);
    setParam("reviewer", name);
    selectQueue(S.queue);
    return true;
  }

  // ---- keyboard --------------------------------------------------------------------------------

  function onKey(e) {
    if (e.key === "Escape") {
      if (dialogOpen()) {
        closeDialogs();
        e.preventDefault();
      }
      return;
    }
    if (dialogOpen() || S.finished) return;
    const t = e.target;
    if (t && (t.tagName === "INPUT" || t.tagName === "TEXTAREA")) return;
    if (e.altKey || e.metaKey || (e.ctrlKey && e.key.toLowerCase() !== "z")) return;
    const k = e.key.length === 1 ? e.key.toLowerCase() : e.key;
    const queueKey = { "1": 0, "2": 1, "3": 2, "4": 3, "5": 4 }[k];
    let handled = true;
    if (k === "i") decide("Include");
    else if (k === "e") decide("Exclude");
    else if (k === "u") decide("Unsure");
    else if (k === "n") openNote();
    else if (k === "z") undo();
    else if (k === "ArrowRight") go(S.pos + 1);
    else if (k === "ArrowLeft") go(S.pos - 1);
    else if (k === "?") openDialog("help", "help-close");
    else if (k === "r") openReviewer();
    else if (queueKey !== undefined) selectQueue(QUEUES[queueKey].id);
    else handled = false;
    if (handled) e.preventDefault();
  }

  function openReviewer() {
    $("reviewer-text").value = S.reviewer;
    openDialog("reviewer-box", "reviewer-text");
  }

  function wire() {
    document.addEventListener("keydown", onKey);
    window.addEventListener("storage", onStorage);
    // A printed record shows its prompt, which the page keeps folded.
    window.addEventListener("beforeprint", () => {
      for (const d of document.querySelectorAll("details")) d.open = true;
    });
    for (const b of document.querySelectorAll("[data-decide]")) {
      b.addEventListener("click", () => decide(b.getAttribute("data-decide")));
    }
    $("btn-prev").addEventListener("click", () => go(S.pos - 1));
    $("btn-next").addEventListener("click", () => go(S.pos + 1));
    $("btn-note").addEventListener("click", openNote);
    $("btn-undo").addEventListener("click", undo);
    $("btn-help").addEventListener("click", () => openDialog("help", "help-close"));
    $("help-close").addEventListener("click", closeDialogs);
    $("btn-finish").addEventListener("click", finish);
    $("reviewer").addEventListener("click", openReviewer);
    $("note-cancel").addEventListener("click", closeDialogs);
    $("reviewer-cancel").addEventListener("click", closeDialogs);
    $("note-form").addEventListener("submit", (e) => {
      e.preventDefault();
      closeDialogs();
      saveNote($("note-text").value.trim());
    });
    $("note-text").addEventListener("keydown", (e) => {
      if (e.key === "Enter" && !e.shiftKey) {
        e.preventDefault();
        $("note-form").requestSubmit();
      }
    });
    $("reviewer-form").addEventListener("submit", (e) => {
      e.preventDefault();
      if (setReviewer($("reviewer-text").value)) closeDialogs();
    });
    for (const id of ["note-box", "reviewer-box", "help"]) {
      $(id).addEventListener("click", (e) => {
        if (e.target === $(id)) closeDialogs();
      });
    }
  }

  // ---- start -----------------------------------------------------------------------------------

  async function start() {
    wire();
    showStatus("loading");
    let st;
    try {
      st = await api("/api/state");
    } catch (e) {
      showStatus("offline");
      banner(e.status === 403 ? "This address has no valid token: open the page through screen_review() in R."
        : "The app is not running: start screen_review() in R.");
      if (e.offline) setTimeout(start, 3000);
      return;
    }
    S.runId = st.run_id;
    S.store = st.store;
    S.meta = (st.page && st.page.meta) || {};
    S.items = (st.page && st.page.items) || [];
    S.byKey = new Map(S.items.map((it) => [itemKey(it), it]));
    // A page of an earlier version kept one list for all tabs, which each wrote whole.
    const old = load("outbox", null);
    if (Array.isArray(old)) {
      for (const d of old) putPending(waiting(Object.assign({}, d, { previous: undefined, pending: undefined })));
      try {
        localStorage.removeItem(storageKey("outbox"));
      } catch (e) {
        /* storage off */
      }
    }
    applyServerDecisions(st.decisions || []);
    S.reviewer = params.get("reviewer") || load("reviewer", null) || S.meta.reviewer || "reviewer";
    document.title = "Review: " + (S.meta.title || S.runId);
    const q = params.get("queue") || load("queue", null) || S.meta.queue || "check";
    selectQueue(QUEUES.some((x) => x.id === q) ? q : "check");
    if (pending().length) flush();
    else showStatus("saved");
  }

  start();
})();
