// Browser test of screen_review(): headless Chromium, driven through the DevTools protocol
// (puppeteer-core), on a real screening of the bundled data against the fake provider. It decides
// records with the keys, reloads the page, kills the app's R process in the middle and starts it
// again, and checks that every decision is in SQLite, in the tibble screen_review() returned and
// in screen_review_decisions(); that hostile titles and abstracts stay text; and it takes the
// screenshots (desktop, 420 px, print) that a developer looks at.
//
//   node --test tests/node/review-browser.test.cjs     (tools/test-browser.sh, make test-browser)
// R_LIBS selects the tabscreen to test; CHROMIUM the browser (default /usr/bin/chromium);
// REVIEW_SHOTS a folder to keep the screenshots in.
"use strict";

const { test, before, after } = require("node:test");
const assert = require("node:assert/strict");
const { spawn, execFileSync } = require("node:child_process");
const fs = require("node:fs");
const os = require("node:os");
const path = require("node:path");

const chromium = process.env.CHROMIUM || "/usr/bin/chromium";
const skip = !fs.existsSync(chromium) ? "no Chromium at " + chromium + " (set CHROMIUM)" : false;
const puppeteer = skip ? null : require("puppeteer-core");

const appScript = path.join(__dirname, "review-app.R");
const work = fs.mkdtempSync(path.join(os.tmpdir(), "tabscreen-review-browser-"));
const shots = process.env.REVIEW_SHOTS || path.join(work, "screenshots");
fs.mkdirSync(shots, { recursive: true });

let browser;
let setup;
const apps = [];
// What the reviewers decided, as the test pressed it: "studyid|reviewer" -> {decision, note}.
const expected = new Map();

function rscript(...args) {
  return execFileSync("Rscript", [appScript, ...args], { encoding: "utf8", stdio: ["ignore", "pipe", "inherit"] });
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function waitFor(what, check, seconds = 60) {
  for (let i = 0; i < seconds * 10; i++) {
    const v = check();
    if (v) return v;
    await sleep(100);
  }
  throw new Error("gave up waiting for " + what);
}

// screen_review() in an R process of its own, as a user would run it; resolves with its address.
async function startApp(n) {
  const log = fs.openSync(path.join(work, "serve-" + n + ".log"), "w");
  const proc = spawn("Rscript", [appScript, "serve", work, String(n)], { stdio: ["ignore", log, log] });
  const app = { proc, exited: false };
  proc.on("exit", () => (app.exited = true));
  apps.push(app);
  const file = path.join(work, "url-" + n + ".txt");
  app.url = await waitFor("the app's address", () => {
    if (app.exited) throw new Error("the app ended: " + fs.readFileSync(path.join(work, "serve-" + n + ".log"), "utf8"));
    return fs.existsSync(file) && fs.readFileSync(file, "utf8").trim();
  });
  return app;
}

async function shot(page, name) {
  const file = path.join(shots, name + ".png");
  // A tab in the background paints no frame, and its screenshot would wait for one forever.
  await page.bringToFront();
  await page.screenshot({ path: file });
  console.log("screenshot: " + file);
}

const cardStudy = (page) => page.$eval("#card", (c) => c.getAttribute("data-studyid"));
const status = (page) => page.$eval("#status", (s) => s.className);
const yours = (page) => page.$eval("#card .yours .pill", (p) => p.getAttribute("data-decision"));

async function saved(page) {
  await page.waitForFunction(() => document.getElementById("status").classList.contains("saved"), { timeout: 30000 });
}

// Presses a decision key on the record shown and remembers what was decided.
async function decide(page, key, reviewer, note = "") {
  const id = await cardStudy(page);
  assert.ok(id, "a record is shown");
  await page.keyboard.press(key);
  expected.set(id + "|" + reviewer, { decision: { i: "Include", e: "Exclude", u: "Unsure" }[key], note });
  return id;
}

async function openPage(url, width) {
  const page = await browser.newPage();
  page.on("pageerror", (e) => console.log("page error: " + e.message));
  await page.setViewport({ width, height: 900 });
  await page.goto(url);
  await page.waitForSelector("#card h1");
  return page;
}

before(async () => {
  if (skip) return;
  browser = await puppeteer.launch({
    executablePath: chromium,
    userDataDir: path.join(work, "chromium-profile"),
    // Without these Chromium waits on the network this machine does not have.
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
      "--disable-background-networking", "--disable-component-update", "--disable-sync"],
  });
});

after(async () => {
  if (browser) await browser.close();
  for (const app of apps) if (!app.exited) app.proc.kill("SIGKILL");
  if (!process.env.REVIEW_SHOTS) fs.rmSync(work, { recursive: true, force: true });
});

test("a screening of the bundled data against the fake provider", { skip }, () => {
  setup = JSON.parse(rscript("setup", work));
  assert.equal(setup.records, 270);
  assert.ok(setup.verdicts.Check > 5 && setup.verdicts.Exclude > 10, JSON.stringify(setup.verdicts));
});

let app1;
let ann;
let annUrl;

test("the page opens on the Check queue", { skip }, async () => {
  app1 = await startApp(1);
  annUrl = app1.url;
  ann = await openPage(annUrl, 1280);
  const current = await ann.$eval('#queues [aria-current="true"]', (b) => b.getAttribute("data-queue"));
  assert.equal(current, "check");
  assert.match(await ann.$eval("#progress-text", (p) => p.textContent), new RegExp("^0 of " + setup.verdicts.Check + " decided"));
  await saved(ann);
  await shot(ann, "desktop-check");
});

test("the keys decide, write a note and undo", { skip }, async () => {
  const a = await decide(ann, "i", "ann");
  await saved(ann);
  assert.notEqual(await cardStudy(ann), a, "a decision goes on to the next record");
  await decide(ann, "e", "ann");
  await saved(ann);

  // A note before the decision is saved with it.
  const c = await cardStudy(ann);
  await ann.keyboard.press("n");
  await ann.waitForSelector("#note-box:not([hidden])");
  await ann.keyboard.type("needs the full text <b>not bold</b>");
  await ann.keyboard.press("Enter");
  await ann.waitForSelector("#note-box", { hidden: true });
  assert.match(await ann.$eval(".note-shown", (p) => p.textContent), /needs the full text <b>not bold<\/b>/);
  await decide(ann, "u", "ann", "needs the full text <b>not bold</b>");
  await saved(ann);

  // Undo takes the last decision back and shows its record again.
  await ann.keyboard.press("z");
  await ann.waitForFunction((id) => document.getElementById("card").getAttribute("data-studyid") === id, {}, c);
  await saved(ann);
  assert.equal(await yours(ann), null);
  expected.delete(c + "|ann");
  await decide(ann, "u", "ann");
  await saved(ann);

  await ann.keyboard.press("?");
  await ann.waitForSelector("#help:not([hidden])");
  await shot(ann, "desktop-help");
  await ann.keyboard.press("Escape");
  await ann.waitForSelector("#help", { hidden: true });
});

test("a reload shows every decision and the place in the queue", { skip }, async () => {
  const at = await cardStudy(ann);
  await ann.reload();
  await ann.waitForSelector("#card h1");
  assert.equal(await cardStudy(ann), at);
  assert.match(await ann.$eval("#progress-text", (p) => p.textContent), /^3 of \d+ decided/);
  const seen = [];
  for (let i = 0; i < 3; i++) {
    await ann.keyboard.press("ArrowLeft");
    seen.unshift([await cardStudy(ann), await yours(ann)]);
  }
  for (const [id, decision] of seen) assert.equal(decision, expected.get(id + "|ann").decision, "record " + id);
});

test("the audit queue is a sample of the model's Excludes", { skip }, async () => {
  await ann.keyboard.press("3");
  await ann.waitForFunction(() => document.querySelector('#queues [aria-current="true"]').getAttribute("data-queue") === "audit");
  assert.match(await ann.$eval("#card .card-top", (p) => p.textContent), /Audit #1/);
  assert.equal(await ann.$eval('#queues [data-queue="audit"] .n', (n) => n.textContent), "10");
  await decide(ann, "e", "ann");
  await saved(ann);
  await decide(ann, "i", "ann");
  await saved(ann);
  await decide(ann, "e", "ann");
  await saved(ann);
  assert.match(await ann.$eval("#progress-text", (p) => p.textContent), /^3 of 10 decided.* 1 include found/);
});

let app2;

test("killing the app loses nothing: the page keeps the click and sends it when the app is back", { skip }, async () => {
  app1.proc.kill("SIGKILL");
  await waitFor("the app to end", () => app1.exited);
  const id = await decide(ann, "i", "ann");
  await ann.waitForFunction(() => document.getElementById("status").classList.contains("offline"), { timeout: 30000 });
  assert.match(await ann.$eval("#banner", (b) => b.textContent), /Not saved: the app is not running/);
  await shot(ann, "desktop-offline");

  app2 = await startApp(2);
  assert.equal(app2.url, annUrl, "the app comes back on the same address");
  await saved(ann);
  await ann.keyboard.press("ArrowLeft");
  assert.equal(await cardStudy(ann), id);
  assert.equal(await yours(ann), "Include");
  assert.equal(await ann.$eval("#card .yours .pill", (p) => p.getAttribute("data-pending")), "false");
});

test("a second reviewer at 420 px, and the conflicts queue", { skip }, async () => {
  const bob = await openPage(annUrl.replace("reviewer=ann", "reviewer=bob"), 420);
  try {
    await bobReviews(bob);
  } finally {
    await bob.close();
  }
});

async function bobReviews(bob) {
  assert.equal(await bob.$eval("#reviewer", (b) => b.textContent), "bob");
  // Blind: bob does not see ann's decisions outside the conflicts queue.
  assert.equal(await yours(bob), null);
  await saved(bob);
  await shot(bob, "mobile-check");
  const first = [...expected.entries()].find(([k, v]) => k.endsWith("|ann") && v.decision === "Include")[0].split("|")[0];
  // bob's Check queue starts on ann's first record, the first Check record.
  assert.equal(await cardStudy(bob), first);
  await decide(bob, "e", "bob");
  await saved(bob);
  await bob.keyboard.press("5");
  await bob.waitForSelector("#card .others");
  assert.equal(await cardStudy(bob), first);
  const others = await bob.$eval("#card .others", (o) => o.textContent);
  assert.match(others, /ann: Include/);
  assert.match(others, /bob: Exclude/);
  await shot(bob, "mobile-conflicts");
  await bob.screenshot({ path: path.join(shots, "mobile-conflicts-full.png"), fullPage: true });
}

test("hostile titles and abstracts are shown as text, and nothing in them runs", { skip }, async () => {
  await ann.keyboard.press("4");
  await ann.waitForFunction(() => document.querySelector('#queues [aria-current="true"]').getAttribute("data-queue") === "all");
  for (let i = 0; i < 300 && !(await ann.$eval("#card .pos", (p) => p.textContent)).startsWith("1 /"); i++) {
    await ann.keyboard.press("ArrowLeft");
  }
  assert.equal(await ann.$eval("#card h1.title", (h) => h.textContent), setup.hostile_title);
  assert.equal(await ann.$eval("#card .abstract .text", (p) => p.textContent), setup.hostile_abstract);
  const page = await ann.evaluate(() => ({
    pwned: window.__pwned === undefined ? null : window.__pwned,
    scripts: document.scripts.length,
    images: document.images.length,
    links: document.querySelectorAll("#card a").length,
    bold: document.querySelectorAll("#card b").length,
    styles: document.querySelectorAll("style").length,
    shown: getComputedStyle(document.body).display,
  }));
  assert.deepEqual(page, { pwned: null, scripts: 1, images: 0, links: 0, bold: 0, styles: 0, shown: "block" });
  await shot(ann, "desktop-hostile");
  await ann.setViewport({ width: 420, height: 900 });
  await shot(ann, "mobile-hostile");
  await ann.emulateMediaType("print");
  assert.equal(await ann.$eval("#bar", (b) => getComputedStyle(b).display), "none");
  await ann.setViewport({ width: 800, height: 1100 });
  await shot(ann, "print-hostile");
  await ann.emulateMediaType(null);
  await ann.setViewport({ width: 1280, height: 900 });
});

test("Finish returns the decisions to R, and every decision is in SQLite and the tibble", { skip }, async () => {
  await ann.click("#btn-finish");
  await ann.waitForFunction(() => document.getElementById("status").textContent === "Finished");
  await waitFor("screen_review() to return", () => app2.exited);
  const returned = JSON.parse(fs.readFileSync(path.join(work, "returned-2.json"), "utf8"));
  const check = JSON.parse(rscript("check", work));
  const asMap = (rows) => new Map(rows.map((r) => [r.studyid + "|" + r.reviewer, { decision: r.decision, note: r.note || "" }]));
  const want = Object.fromEntries([...expected].sort());
  for (const [what, rows] of [["SQLite", check.sqlite], ["screen_review()", returned], ["screen_review_decisions()", check.tibble]]) {
    assert.deepEqual(Object.fromEntries([...asMap(rows)].sort()), want, what);
  }
  assert.ok(check.events[0].undone >= 1, "the undo is in the history");
  const audited = check.sqlite.filter((r) => r.reviewer === "ann" && r.audit === 1);
  assert.equal(audited.length, 4);
  assert.equal(check.audit[0].reviewed, 4);
  assert.equal(check.audit[0].found, audited.filter((r) => r.decision === "Include").length);
  assert.ok(check.audit[0].share_upper > 0 && check.audit[0].share_upper <= 1);
  const annIncludes = [...expected].filter(([k, v]) => k.endsWith("|ann") && v.decision === "Include").length;
  assert.equal(check.merged["1"], annIncludes);
});

// ---- decisions waiting in the browser, shared by its tabs --------------------------------------
// These start the app again on the same store (after Finish above, or alone with
// --test-name-pattern "bundled data|waiting decisions") and read SQLite's events themselves.

const storeRows = () => JSON.parse(rscript("events", work));
const eventsOf = (rows, studyid, reviewer) => rows.events.filter((e) => e.studyid === studyid && e.reviewer === reviewer);
const currentOf = (rows, studyid, reviewer) => rows.current.find((d) => d.studyid === studyid && d.reviewer === reviewer);
// Every decision the tests below made, "studyid|reviewer": each must be one event in the store.
const waited = new Set();

// A tab in the background runs no animation frame, on which waitForFunction polls by default.
const statusIs = (page, kind) => page.waitForFunction((k) => document.getElementById("status").classList.contains(k),
  { timeout: 30000, polling: 100 }, kind);
const offline = (page) => statusIs(page, "offline");
const savedIn = (page) => statusIs(page, "saved");

// A key goes to the tab in front: bring the tab there first.
async function decideIn(page, key, reviewer) {
  await page.bringToFront();
  return decide(page, key, reviewer);
}

async function stopApp(app) {
  app.proc.kill("SIGKILL");
  await waitFor("the app to end", () => app.exited);
}

test("waiting decisions: two reviewers in two tabs with the app down, both decisions reach the store once", { skip }, async (t) => {
  const app3 = await startApp(3);
  const xena = await openPage(app3.url.replace("reviewer=ann", "reviewer=xena"), 1280);
  const yann = await openPage(app3.url.replace("reviewer=ann", "reviewer=yann"), 1280);
  await savedIn(xena);
  await savedIn(yann);
  await stopApp(app3);
  const x = await decideIn(xena, "i", "xena");
  await offline(xena);
  await yann.bringToFront();
  await yann.keyboard.press("ArrowRight");
  const y = await decideIn(yann, "e", "yann");
  await offline(yann);
  assert.notEqual(x, y);
  waited.add(x + "|xena").add(y + "|yann");
  // Reviewer X leaves: the page said the decision is kept in this browser.
  await xena.close();
  const app4 = await startApp(4);
  t.after(() => stopApp(app4));
  // screen_review() opens a new tab, while Y's tab is still open.
  const fresh = await openPage(app4.url, 1280);
  await savedIn(fresh);
  await savedIn(yann);
  const rows = storeRows();
  assert.equal(eventsOf(rows, x, "xena").length, 1, "X's decision, made in the tab since closed, is stored once");
  assert.equal(eventsOf(rows, y, "yann").length, 1, "Y's decision is stored once");
  assert.equal(currentOf(rows, x, "xena").decision, "Include");
  assert.equal(currentOf(rows, y, "yann").decision, "Exclude");
  await fresh.close();
  await yann.close();
});

test("waiting decisions: after a restart the old tab and the new one store a waiting decision once, and undo takes it back", { skip }, async (t) => {
  const app5 = await startApp(5);
  const old = await openPage(app5.url, 1280);
  await savedIn(old);
  await stopApp(app5);
  // After the tests above ann may have decided this record already: the new decision adds one event.
  const z = await cardStudy(old);
  let rows = storeRows();
  const prior = currentOf(rows, z, "ann");
  const earlier = eventsOf(rows, z, "ann");
  assert.equal(await decideIn(old, "i", "ann"), z);
  await offline(old);
  const app6 = await startApp(6);
  t.after(() => stopApp(app6));
  const newer = await openPage(app6.url, 1280);
  await savedIn(newer);
  await savedIn(old);
  rows = storeRows();
  const added = eventsOf(rows, z, "ann").slice(earlier.length);
  assert.equal(added.length, 1, "the waiting decision is stored once");
  assert.ok(added[0].decision_id, "the decision's id is stored");
  assert.equal(currentOf(rows, z, "ann").decision, "Include");

  // Undo in the new tab takes back the decision itself.
  await newer.bringToFront();
  await newer.keyboard.press("z");
  await newer.waitForFunction((id) => document.getElementById("card").getAttribute("data-studyid") === id, {}, z);
  await savedIn(newer);
  assert.equal(await yours(newer), prior ? prior.decision : null, "the page shows the decision before it");
  rows = storeRows();
  assert.deepEqual(currentOf(rows, z, "ann"), prior, "the store holds ann's decision before it on record " + z);
  assert.deepEqual(eventsOf(rows, z, "ann").map((e) => e.undone), earlier.map((e) => e.undone).concat([1]));

  // Every decision made in the tabs is in the store exactly once, and none waits any more.
  for (const k of waited) {
    const [studyid, reviewer] = k.split("|");
    assert.equal(eventsOf(rows, studyid, reviewer).length, 1, k);
  }
  // A copy: a reviewer's event on a record the same as the one before it, both standing.
  const copies = rows.events.filter((e, i) => {
    const f = rows.events.slice(0, i).reverse().find((g) => g.studyid === e.studyid && g.reviewer === e.reviewer);
    return f && !f.undone && !e.undone && f.decision === e.decision && (f.note || "") === (e.note || "");
  });
  assert.deepEqual(copies, [], "no decision is in the store twice");
  for (const page of [old, newer]) {
    const left = await page.evaluate(() => Object.keys(localStorage).filter((k) => k.startsWith("tabscreen-pending-")));
    assert.deepEqual(left, []);
  }
  await old.close();
  await newer.close();
});
