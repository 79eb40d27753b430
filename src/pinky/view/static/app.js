/* pinky view: every view is drawn from the JSON API with DOM nodes and text nodes; a note's text never
   becomes markup, except markdown rendered by markdown-it with raw HTML off (html: false). */
"use strict";

delete document.head.appendChild;  // quiet-styles.js kept force-graph's <style> elements out: <head> is itself again

/* This run's session secret: from the one-time sign-in link (`#sign-in=CODE`, exchanged once), kept in this
   origin's localStorage (its origin is its port too: no page of another port reads it, as every port reads a
   cookie of 127.0.0.1) and sent in the Authorization header of every request, which no other page can make
   the browser send. No cookie grants anything. */
const SESSION_KEY = "pinky-view-session";
let session = readSession();
const main = document.getElementById("main");
const REL_COLOURS = {
  relates: "#9aa3ad", depends_on: "#2f6fdd", supersedes: "#8250df", contradicts: "#cf222e",
  caused_by: "#d4731c", fixed_by: "#1a7f37", links: "#b7bcc3",
};
/* Node colours: a palette of its own, none of them a relation's colour (a node must not read as a link). */
const TYPE_COLOURS = {
  gotcha: "#e8a33d", pattern: "#17becf", bug: "#e377c2", decision: "#8c564b", guide: "#9bbb2f",
  note: "#3b4a8c", status: "#f2d035", diary: "#c49c94", file: "#2b2d42", cluster: "#c2416b",
};
const OTHER_TYPE = "#7d8b99";
const perf = (window.pinkyPerf = { keystrokes: [], searches: [], graph: null, ready: null });
let about = null;

// --- DOM helpers: text is always a text node ---------------------------------------------------------

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (key === "class") node.className = value;
    else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else if (key === "dataset") Object.assign(node.dataset, value);
    else node.setAttribute(key, value === true ? "" : String(value));
  }
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}
const nodes = (children) => children.flat(Infinity).filter((c) => c !== null && c !== undefined && c !== false)
  .map((c) => (c instanceof Node ? c : document.createTextNode(String(c))));
function fill(target, ...children) { target.replaceChildren(...nodes(children)); }
function add(target, ...children) { target.append(...nodes(children)); }
const noteHref = (slug) => "#/note/" + encodeURIComponent(slug);
const graphHref = (slug) => "#/graph/" + encodeURIComponent(slug);
const noteLink = (slug, text, cls) => el("a", { href: noteHref(slug), class: cls || null }, text || slug);
const badge = (text, cls) => el("span", { class: "badge " + (cls || "") }, text);
const relTag = (rel) => el("span", { class: "rel", style: null, dataset: { rel } }, rel);
const colourOf = (rel) => REL_COLOURS[rel] || `hsl(${[...rel].reduce((h, c) => (h * 31 + c.charCodeAt(0)) % 360, 7)},55%,45%)`;
const spinner = (text) => el("div", { class: "spinner" }, text || "loading…");
const empty = (text) => el("div", { class: "empty" }, text);

function paintRels(root) {
  for (const tag of root.querySelectorAll(".rel")) tag.style.background = colourOf(tag.dataset.rel);
}

function highlight(text, query) {
  const words = (query || "").toLowerCase().match(/[\p{L}\p{N}_]{2,}/gu) || [];
  if (!words.length) return [text];
  const pattern = new RegExp("(" + words.map((w) => w.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")).join("|") + ")", "giu");
  return text.split(pattern).map((part, i) => (i % 2 ? el("mark", {}, part) : part));
}

// --- API ------------------------------------------------------------------------------------------------

function readSession() {
  try { return localStorage.getItem(SESSION_KEY) || ""; } catch { return ""; }
}

/* Every request: same-origin, no cookie, never followed to another origin (a redirect there is an error). */
function send(path, options, headers) {
  return fetch(path, { ...options, credentials: "omit", redirect: "error", cache: "no-store",
    headers: { ...headers, Authorization: "Bearer " + session } });
}

async function api(path, params) {
  const url = new URL(path, location.origin);
  for (const [key, value] of Object.entries(params || {})) {
    for (const item of [].concat(value)) if (item !== "" && item !== null && item !== undefined) url.searchParams.append(key, item);
  }
  const response = await send(url.pathname + url.search, {}, { Accept: "application/json" });
  signedOut(response);
  const data = await readJson(response);
  if (!response.ok) throw new Error(data.error || response.statusText);
  return data;
}

async function change(path, body) {
  const response = await send(path, { method: "POST", body: JSON.stringify(body) }, { "Content-Type": "application/json" });
  signedOut(response);
  const data = await readJson(response);
  if (!response.ok) throw new Error(data.error || response.statusText);
  return data;
}

async function readJson(response) {
  const text = await response.text();
  try { return JSON.parse(text); } catch { return { error: text.trim() }; }
}

/* 401: no session, or the one kept is of an earlier run (the server restarted): say so, and how to sign in. */
function signedOut(response) {
  if (response.status === 401) document.getElementById("readonly").hidden = false;
}

/* `#sign-in=CODE`: the code leaves the address bar and the history first (reload and the back button never
   send it again), then it is exchanged, once, for the session secret. A spent code with a live session kept
   (the back button to the sign-in page) is no failure: the page goes on with the session it has. */
async function signIn() {
  const found = location.hash.match(/^#sign-in=([A-Za-z0-9_-]+)$/);
  if (!found) return;
  history.replaceState(null, "", location.pathname + "#/search");
  const response = await fetch("/api/sign-in", { method: "POST", body: JSON.stringify({ code: found[1] }),
    credentials: "omit", redirect: "error", cache: "no-store", headers: { "Content-Type": "application/json" } });
  const data = await readJson(response);
  if (!response.ok || !data.session) { if (!session) toast(data.error || response.statusText, null, true); return; }
  session = data.session;
  try { localStorage.setItem(SESSION_KEY, session); } catch { /* storage off: this tab alone stays signed in */ }
  document.getElementById("readonly").hidden = true;
}

/* Another tab of this origin signed in (a new run of the server): this one takes the new session too. */
window.addEventListener("storage", (event) => {
  if (event.key !== SESSION_KEY || !event.newValue) return;
  session = event.newValue;
  document.getElementById("readonly").hidden = true;
  route();
});

function toast(message, undoId, isError) {
  const box = document.getElementById("toast");
  fill(box, el("span", {}, message));
  box.classList.toggle("error", !!isError);
  if (undoId) add(box, el("button", { onclick: () => undo(undoId), "data-undo": undoId }, "Undo"));
  box.hidden = false;
  clearTimeout(toast.timer);
  toast.timer = setTimeout(() => { box.hidden = true; }, isError ? 8000 : 12000);
}

async function act(path, body) {
  try {
    const result = await change(path, body);
    toast(result.done.label, result.done.id);
    route();
    return result;
  } catch (error) {
    toast(error.message, null, true);
    return null;
  }
}

async function undo(id) {
  try {
    const result = await change("/api/undo", { id });
    toast("undone: " + result.undone.label);
    route();
  } catch (error) {
    toast(error.message, null, true);
  }
}

const canChange = () => Boolean(session) && document.getElementById("readonly").hidden;
const actionButton = (label, onclick, cls) =>
  el("button", { onclick, class: cls || null, disabled: !canChange(), title: canChange() ? null : "read-only" }, label);

// --- markdown -------------------------------------------------------------------------------------------

let md = null;
function markdown() {
  if (md) return md;
  md = window.markdownit({ html: false, linkify: false, typographer: false });
  md.inline.ruler.before("link", "wikilink", (state, silent) => {
    const src = state.src, start = state.pos;
    if (src.charCodeAt(start) !== 0x5b || src.charCodeAt(start + 1) !== 0x5b) return false;
    const end = src.indexOf("]]", start + 2);
    if (end < 0 || src.slice(start + 2, end).includes("\n")) return false;
    if (!silent) {
      const [target, alias] = src.slice(start + 2, end).split("|");
      const name = target.split("#")[0].trim();
      const open = state.push("link_open", "a", 1);
      open.attrs = [["href", noteHref(name)], ["class", "wikilink"]];
      const text = state.push("text", "", 0);
      text.content = (alias || target).trim();
      state.push("link_close", "a", -1);
    }
    state.pos = end + 2;
    return true;
  });
  return md;
}

/* A link's %-escapes decoded, or the text as written when they are malformed ("caf%E9.md" is Latin-1, not
   UTF-8): a note's link must never stop the note from rendering. */
function decoded(text) {
  try { return decodeURIComponent(text); } catch { return text; }
}

function joinPath(dir, rel) {
  const parts = (dir ? dir.split("/") : []);
  for (const part of rel.split("/")) {
    if (part === "..") parts.pop();
    else if (part && part !== ".") parts.push(part);
  }
  return parts.join("/");
}

/* Render a note's markdown; relative .md links open notes, relative images come from /raw inside the root. */
function renderMarkdown(text, root, rel) {
  const dir = rel ? rel.split("/").slice(0, -1).join("/") : "";
  const env = {};
  const tokens = markdown().parse(text, env);
  const rewrite = (list) => {
    for (const token of list) {
      if (token.children) rewrite(token.children);
      if (token.type === "link_open") {
        const href = token.attrGet("href") || "";
        if (/^[a-z][a-z0-9+.-]*:/i.test(href)) {
          token.attrSet("target", "_blank");
          token.attrSet("rel", "noopener noreferrer");
        } else if (!href.startsWith("#") && /\.md(#.*)?$/i.test(href)) {
          const path = joinPath(dir, decoded(href.split("#")[0])).replace(/\.md$/i, "");
          token.attrSet("href", noteHref((root === "global" ? "global/" : "") + path));
        }
      } else if (token.type === "image") {
        const src = token.attrGet("src") || "";
        if (!/^[a-z][a-z0-9+.-]*:/i.test(src) && !src.startsWith("/") && root) {
          token.attrs = token.attrs.filter(([name]) => name !== "src");  // loadImages fetches it, with the session
          token.attrSet("data-raw", "/raw/" + root + "/" + joinPath(dir, decoded(src)).split("/").map(encodeURIComponent).join("/"));
        }
      }
    }
  };
  rewrite(tokens);
  const box = el("div", { class: "md" });
  box.innerHTML = markdown().renderer.render(tokens, markdown().options, env);  // html:false: every tag escaped
  loadImages(box);
  return box;
}

/* An image of a note needs the session like every file of the brain: an <img src> would go without it. */
function loadImages(box) {
  for (const image of box.querySelectorAll("img[data-raw]")) {
    send(image.dataset.raw, {}, {}).then((response) => response.ok ? response.blob() : null).then((blob) => {
      if (!blob) return;
      image.addEventListener("load", () => URL.revokeObjectURL(image.src), { once: true });
      image.src = URL.createObjectURL(blob);
    }, () => {});
  }
}

// --- router ---------------------------------------------------------------------------------------------

let lastNote = null;
const views = { search: searchView, note: noteView, graph: graphView, review: reviewView, diary: diaryView };

function route() {
  const hash = location.hash.replace(/^#\/?/, "");
  const cut = hash.indexOf("?");  // the query first: a cluster id or a search may hold a "/"
  const query = new URLSearchParams(cut < 0 ? "" : hash.slice(cut + 1));
  const [name, ...rest] = (cut < 0 ? hash : hash.slice(0, cut)).split("/");
  const view = views[name] ? name : "search";
  const arg = rest.length && rest.join("/") ? decoded(rest.join("/")) : null;
  for (const link of document.querySelectorAll("nav a")) link.classList.toggle("active", link.dataset.tab === view);
  const noteTab = document.querySelector('nav a[data-tab="note"]');
  noteTab.href = lastNote ? noteHref(lastNote) : "#/note";
  const graphTab = document.querySelector('nav a[data-tab="graph"]');
  graphTab.href = lastNote ? graphHref(lastNote) : "#/graph";
  main.classList.toggle("wide", view === "graph");
  stopGraph();
  views[view](arg, query);
}

// --- 1. search ------------------------------------------------------------------------------------------

const searchState = { q: "", scope: "", type: "", tag: "", since: "", mode: "hybrid", all: false, weak: false };
const BANDS = { strong: "strong match", relevant: "relevant", similar: "close in meaning", weak: "weak: below the relevance floor" };
let searchBox = null;

function searchView(_arg, query) {
  if (query.has("q")) searchState.q = query.get("q");
  const input = el("input", { type: "search", class: "big", placeholder: "Search the brain… (as you type)",
    value: searchState.q, "aria-label": "search", id: "q" });
  input.addEventListener("input", () => { searchState.q = input.value; searchState.weak = false; perf.keystrokes.push({ q: input.value, t0: performance.now(), t1: null }); runSearch(); });
  const select = (name, options, label) => {
    const node = el("select", { "aria-label": label, id: "f-" + name },
      options.map(([value, text]) => el("option", { value, selected: searchState[name] === value }, text)));
    node.addEventListener("change", () => { searchState[name] = node.value; runSearch(); });
    return node;
  };
  const types = (about && about.types.length ? about.types : ["gotcha", "pattern", "bug", "decision", "diary", "guide", "note", "status"]);
  const tag = el("input", { type: "text", placeholder: "tag", list: "tags", value: searchState.tag, size: 12, "aria-label": "tag" });
  tag.addEventListener("change", () => { searchState.tag = tag.value.trim(); runSearch(); });
  const all = el("input", { type: "checkbox", checked: searchState.all, id: "f-all" });
  all.addEventListener("change", () => { searchState.all = all.checked; runSearch(); });
  const filters = el("div", { class: "row filters" },
    select("scope", [["", "both scopes"], ["project", "this project"], ["global", "global"]], "scope"),
    select("type", [["", "any type"], ...types.map((t) => [t, t])], "type"),
    tag, el("datalist", { id: "tags" }, (about ? about.tags : []).map((t) => el("option", { value: t }))),
    select("since", [["", "any time"], ["7d", "fresh: 7 days"], ["30d", "30 days"], ["90d", "90 days"], ["365d", "a year"]], "since"),
    select("mode", [["hybrid", "hybrid"], ["bm25", "full text"], ["vector", "semantic"]], "mode"),
    el("label", { class: "small" }, all, " include superseded"));
  searchBox = { status: el("div", { class: "status", id: "search-status" }), results: el("div", { id: "results" }) };
  fill(main, input, filters, searchBox.status, searchBox.results);
  input.focus();
  runSearch();
}

let inFlight = false, queued = false;
async function runSearch() {
  if (inFlight) { queued = true; return; }
  inFlight = true;
  const state = { ...searchState };
  const started = performance.now();
  try {
    const data = await api("/api/search", { q: state.q, scope: state.scope, type: state.type, tag: state.tag,
      since: state.since, mode: state.q ? state.mode : "", all: state.all ? "1" : "" });
    showResults(data, state, started);
  } catch (error) {
    if (searchBox) fill(searchBox.status, el("span", { class: "badge bad" }, error.message));
  } finally {
    inFlight = false;
    if (queued) { queued = false; runSearch(); }
  }
}

function showResults(data, state, started) {
  if (!searchBox || !document.body.contains(searchBox.results)) return;
  const now = performance.now();
  for (const k of perf.keystrokes) if (k.t1 === null && state.q.startsWith(k.q) && k.q.length <= state.q.length) k.t1 = now;
  perf.searches.push({ q: state.q, ms: now - started, server_ms: data.ms || null });
  const items = data.hits || data.entries || [];
  if (!state.q) {
    fill(searchBox.status, `${items.length} most recently changed entries`, data.notice ? el("span", { class: "badge stale" }, data.notice) : "");
    fill(searchBox.results, ...(items.length ? items.map((item) => hitCard(item, "")) : [empty("The brain is empty.")]));
  } else {
    showHits(data, items, state, Math.round(now - started));
  }
  searchBox.results.dataset.query = state.q;
  if (perf.ready === null) perf.ready = performance.now();
}

/* Hits that share enough of the query's words (the prompt hook's floor) or come close in meaning, weaker ones
   behind a button; "nothing relevant" when none does; history (diaries) last, and said why. */
function showHits(data, items, state, ms) {
  const shown = !searchState.weak ? items.filter((item) => item.band !== "weak") : items;
  const hidden = items.length - shown.length;
  fill(searchBox.status, `${data.relevant} relevant of ${items.length} hit${items.length === 1 ? "" : "s"}`,
    ` · ${data.mode} · ${ms} ms`, data.notice ? el("span", { class: "badge stale" }, data.notice) : "");
  const cards = [];
  shown.forEach((item, i) => {
    if (item.type === "diary" && i > 0 && shown[i - 1].type !== "diary" && state.type !== "diary") {
      cards.push(el("div", { class: "history-head", id: "history-head" }, "History comes last: diary lines record what " +
        "happened, not what holds. Choose the type diary to rank them on their own."));
    }
    cards.push(hitCard(item, state.q));
  });
  if (!shown.length) cards.push(empty(`Nothing relevant to “${state.q}”.`));
  if (hidden || searchState.weak) {
    const more = el("button", { id: "weak-hits" }, searchState.weak ? "Hide the hits below the relevance floor" :
      `Show ${hidden} weaker hit${hidden === 1 ? "" : "s"} below the relevance floor`);
    more.addEventListener("click", () => { searchState.weak = !searchState.weak; showHits(data, items, state, ms); });
    cards.push(el("div", { class: "small muted" }, more));
  }
  fill(searchBox.results, ...cards);
}

function staleBadge(item) {
  if (item.stale) return badge(`stale: unverified for ${item.age_days} days`, "stale");
  if (item.age_days === null || item.age_days === undefined) return null;
  return badge(item.age_days === 0 ? "verified today" : `verified ${item.age_days} d ago`);  // as the hooks say it
}

function partsLine(parts) {
  if (!parts) return null;
  const names = { full_text: "full text", vector: "vector", second_stage: "e5" };
  return el("div", { class: "parts", title: "why it ranked: its rank on each side" },
    Object.entries(names).filter(([key]) => parts[key]).map(([key, name]) =>
      el("span", {}, `${name} #${parts[key].rank}`)),
    parts.context ? el("span", {}, "context: " + parts.context) : null);
}

function hitCard(item, query) {
  return el("div", { class: "card hit", dataset: { slug: item.slug } },
    el("div", { class: "row" }, noteLink(item.slug, item.title, "title"), el("span", { class: "spacer" }),
      item.rank ? el("span", { class: "mono small muted" }, "#" + item.rank) : null),
    el("div", {}, item.band ? badge(BANDS[item.band], "band " + item.band) : null,
      badge(item.type, "type"), badge(item.scope, "scope"), staleBadge(item),
      item.superseded_by ? badge("superseded by " + item.superseded_by, "bad") : null,
      (item.tags || []).map((t) => badge("#" + t))),
    item.snippet ? el("div", { class: "snippet" }, highlight(item.snippet, query)) : null,
    el("div", { class: "small muted mono" }, item.path + (item.line ? ":" + item.line : ""), item.heading ? " · " + item.heading : ""),
    partsLine(item.parts));
}

// --- 2. a note ------------------------------------------------------------------------------------------

async function noteView(slug) {
  if (!slug) { fill(main, empty("Open a note from the search, the graph, the review list or the diary.")); return; }
  fill(main, spinner());
  let note;
  try { note = await api("/api/note", { slug }); } catch (error) { fill(main, el("h1", {}, "Not found"), empty(error.message)); return; }
  lastNote = note.slug;
  document.querySelector('nav a[data-tab="note"]').href = noteHref(note.slug);
  document.querySelector('nav a[data-tab="graph"]').href = graphHref(note.slug);
  const reason = () => { const text = prompt("Why archive it? (kept in its frontmatter)", "outdated"); return text && text.trim(); };
  const head = el("div", { class: "note-head" },
    el("div", { class: "spacer" },
      el("h1", { id: "note-title" }, note.title),
      el("div", {}, badge(note.type, "type"), badge(note.scope, "scope"),
        note.meta.superseded_by ? badge("superseded by " + note.meta.superseded_by, "bad") : null,
        note.redacted.length ? badge("secrets hidden: " + note.redacted.join(", "), "stale") : null,
        (note.tags || []).map((t) => badge("#" + t))),
      el("div", { class: "small muted mono" }, note.path, " · version ", note.version.slice(0, 12))),
    el("div", { class: "actions" },
      el("a", { href: graphHref(note.slug) }, el("button", {}, "Graph")),
      actionButton("Verify", () => act("/api/verify", { slug: note.slug })),
      actionButton("Archive", () => { const why = reason(); if (why) act("/api/archive", { slug: note.slug, reason: why }); })));
  const side = el("div", {},
    el("h3", {}, "Frontmatter"), fieldsTable(note.meta),
    el("h3", {}, "Feedback"), feedbackLine(note.feedback),
    note.chain.length ? [el("h3", {}, "Versions"), chainList(note.chain, note.slug)] : null,
    el("h3", {}, "Code"), codeList(note.related.code));
  const links = el("div", {},
    el("h2", {}, "Links out"), linkList(note.related.links, true),
    el("h2", {}, "Links in"), linkList(note.related.backlinks, false));
  const history = el("div", { id: "history" }, spinner("reading the history…"));
  fill(main, head, el("div", { class: "note-grid" },
    el("div", {}, renderMarkdown(note.body, note.root, note.rel), links, el("h2", {}, "History"), history), side));
  paintRels(main);
  api("/api/timeline", { slug: note.slug }).then((data) => fill(history, timelineList(data)),
    (error) => fill(history, empty(error.message)));
}

function fieldsTable(meta) {
  const rows = Object.entries(meta).map(([key, value]) =>
    el("tr", {}, el("td", {}, key), el("td", {}, typeof value === "string" ? value : JSON.stringify(value))));
  return rows.length ? el("table", { class: "fields" }, rows) : empty("none");
}

function feedbackLine(counts) {
  const parts = ["useful", "wrong", "outdated"].map((v) => badge(`${v} ${counts[v] || 0}`, v === "useful" ? "ok" : counts[v] ? "bad" : ""));
  return el("div", {}, parts);
}

function dates(item) {
  if (!item.since && !item.until) return null;
  return el("span", { class: "small muted" }, ` ${item.since || "…"} → ${item.until || "now"}`);
}

function linkList(items, outgoing) {
  if (!items.length) return empty(outgoing ? "This note links to nothing." : "Nothing links here.");
  return el("ul", { class: "links" }, items.map((item) => el("li", {},
    relTag(item.rel), item.slug ? noteLink(item.slug, item.title || item.slug) : el("span", { class: "muted" }, item.target + " (unresolved)"),
    el("span", { class: "small muted" }, ` ${item.kind}${item.line ? ":" + item.line : ""}`), dates(item))));
}

function codeList(code) {
  if (!code.length) return empty("No code names this note.");
  return el("ul", { class: "links" }, code.map((item) => el("li", { class: "mono" },
    item.file + (item.line ? ":" + item.line : ""), el("span", { class: "small muted" }, " " + item.source))));
}

function chainList(chain, current) {
  return el("ul", { class: "links" }, chain.map((v) => el("li", {},
    v.slug === current ? el("b", {}, v.title) : noteLink(v.slug, v.title),
    el("span", { class: "small muted" }, ` ${v.valid_from || v.created || "…"} → ${v.valid_until || (v.current ? "current" : "…")}`))));
}

function timelineList(data) {
  if (!data.events.length) return empty("No history yet.");
  return el("div", {}, el("div", { class: "small muted" }, data.history),
    el("ul", { class: "timeline" }, data.events.map((event) => el("li", {},
      el("span", { class: "when" }, event.date.replace("T", " ").slice(0, 16)), badge(event.kind), event.text))));
}

// --- 3. the graph ---------------------------------------------------------------------------------------

let graph = null;

function stopGraph() {
  if (graph) { graph.pauseAnimation(); graph._destructor && graph._destructor(); graph = null; window.pinkyGraph = null; }
  document.getElementById("tooltip").hidden = true;
}

async function graphView(slug, query) {
  const depth = Number(query.get("depth") || 1);
  const cluster = query.get("cluster");
  const box = el("div", { class: "graph-box", id: "graph" });
  const title = el("div", { class: "row" });
  const legend = el("div", { class: "legend rels" }, el("span", { class: "muted" }, "links:"),
    Object.entries(REL_COLOURS).filter(([r]) => r !== "links").map(([rel, colour]) =>
      el("span", {}, el("i", { dataset: { colour } }), rel)));
  const kinds = el("div", { class: "legend nodes" });
  fill(main, title, legend, kinds, box);
  const started = performance.now();
  let data;
  try {
    data = slug ? await api("/api/graph", { slug, depth }) : await api("/api/overview", { cluster });
  } catch (error) { fill(box, empty(error.message)); return; }
  const fetched = performance.now();
  if (slug) {
    add(title, el("h2", {}, "Around ", noteLink(slug, slug)),
      ...[1, 2, 3].map((d) => el("a", { href: graphHref(slug) + "?depth=" + d }, el("button", { class: d === depth ? "primary" : null }, `${d} hop${d > 1 ? "s" : ""}`))),
      el("a", { href: "#/graph" }, el("button", {}, "Whole brain")),
      el("span", { class: "small muted" }, `${data.nodes.length} nodes, ${data.edges.length} links${data.truncated ? " (cut: the walk is bounded)" : ""}`));
  } else {
    add(title, el("h2", {}, cluster ? "A cluster" : "The whole brain"),
      cluster ? el("a", { href: "#/graph" }, el("button", {}, "All clusters")) : null,
      el("span", { class: "small muted" }, data.mode === "clusters" ?
        `${data.total.toLocaleString()} notes in ${data.nodes.length} clusters: click one to open it` :
        `${countOf(data.nodes, false, "note")}, ${countOf(data.nodes, true, "code file")}, ${data.edges.length.toLocaleString()} links${data.cut ? ` (the ${data.cut.toLocaleString()} least linked notes not drawn)` : ""}`));
  }
  if (!data.nodes.length) { fill(box, empty("No notes to draw.")); return; }
  nodeLegend(kinds, data.nodes);
  for (const swatch of main.querySelectorAll(".legend i")) swatch.style.background = swatch.dataset.colour;
  drawGraph(box, data, slug, { started, fetched });
}

/* What each node's colour and shape means: the types drawn, code files (squares), clusters. */
function nodeLegend(box, nodes) {
  const kinds = [...new Set(nodes.map((n) => n.kind === "file" ? "file" : n.type || "note"))]
    .sort((a, b) => (a === "file") - (b === "file") || a.localeCompare(b));
  fill(box, el("span", { class: "muted" }, "nodes:"), kinds.map((kind) => el("span", { dataset: { kind } },
    el("i", { class: kind === "file" ? "square" : "dot", dataset: { colour: TYPE_COLOURS[kind] || OTHER_TYPE } }),
    kind === "file" ? "code file" : kind)));
}

const countOf = (nodes, files, noun) => {
  const count = nodes.filter((n) => (n.kind === "file") === files).length;
  return `${count.toLocaleString()} ${noun}${count === 1 ? "" : "s"}`;
};

function drawGraph(box, data, root, times) {
  const nodes = data.nodes.map((n) => ({ ...n, kind: n.kind || (n.type === "cluster" ? "cluster" : "entry") }));
  const links = data.edges.map((e) => ({ source: e.from, target: e.to, rel: e.rel, kind: e.kind, count: e.count || 1 }));
  const degree = {};
  for (const l of links) { degree[l.source] = (degree[l.source] || 0) + 1; degree[l.target] = (degree[l.target] || 0) + 1; }
  const big = nodes.length > 400;
  const radius = (n) => n.kind === "cluster" ? 2 + Math.sqrt(n.size) / 2 : n.id === root ? 7 : 3 + Math.min(5, Math.sqrt(degree[n.id] || 0));
  const named = new Set(nodes.filter((n) => n.kind === "cluster").sort((a, b) => b.size - a.size).slice(0, 12).map((n) => n.id));
  const tip = document.getElementById("tooltip");
  let mouse = [0, 0];
  box.addEventListener("mousemove", (event) => { mouse = [event.clientX, event.clientY]; tip.style.left = mouse[0] + 12 + "px"; tip.style.top = mouse[1] + 12 + "px"; });
  let firstFrame = null;
  graph = ForceGraph()(box)
    .width(box.clientWidth).height(box.clientHeight)
    .graphData({ nodes, links })
    .nodeId("id")
    .nodeVal((n) => radius(n) ** 2 / 4)
    .nodeLabel(() => "")
    .linkColor((l) => colourOf(l.rel))
    .linkWidth((l) => l.kind === "typed" ? 1.6 : l.count > 1 ? Math.min(6, 1 + Math.log2(l.count)) : 0.8)
    .linkDirectionalArrowLength(big ? 0 : 4).linkDirectionalArrowRelPos(1)
    .warmupTicks(big ? 0 : 40).cooldownTicks(big ? Infinity : 80).cooldownTime(big ? 8000 : 3000)
    .nodeCanvasObject((node, ctx, scale) => {
      const r = radius(node);
      ctx.beginPath();
      if (node.kind === "file") ctx.rect(node.x - r, node.y - r, 2 * r, 2 * r);
      else ctx.arc(node.x, node.y, r, 0, 2 * Math.PI);
      ctx.fillStyle = TYPE_COLOURS[node.kind === "file" ? "file" : node.type] || OTHER_TYPE;
      ctx.fill();
      if (node.id === root) { ctx.lineWidth = 2 / scale; ctx.strokeStyle = "#1f2328"; ctx.stroke(); }
      const show = node.id === root || named.has(node.id) || node.__hover || scale > 4 ||
        (node.kind !== "cluster" && scale > (big ? 3 : 1.2));
      if (show) {
        const label = (node.title || node.path || node.id).slice(0, 48);
        ctx.font = `${(node.kind === "cluster" ? 12 : 11) / scale}px system-ui, sans-serif`;
        ctx.fillStyle = "#1f2328";
        ctx.textAlign = "center";
        ctx.fillText(label, node.x, node.y + r + 10 / scale);
      }
    })
    .nodePointerAreaPaint((node, colour, ctx) => {
      ctx.fillStyle = colour; ctx.beginPath(); ctx.arc(node.x, node.y, radius(node) + 2, 0, 2 * Math.PI); ctx.fill();
    })
    .onNodeHover((node) => {
      for (const n of nodes) n.__hover = n === node;
      tip.hidden = !node;
      if (node) {
        fill(tip, el("b", {}, node.title || node.path || node.id), el("br"),
          node.kind === "cluster" ? `${node.size} notes · click to open` : node.kind === "file" ? "code file" : `${node.type || ""} · ${node.id}`);
      }
      box.style.cursor = node && node.kind !== "file" ? "pointer" : null;
    })
    .onNodeClick((node) => {
      if (node.kind === "cluster") location.hash = "#/graph?cluster=" + encodeURIComponent(node.id);
      else if (node.kind !== "file") location.hash = noteHref(node.id);
    })
    .onRenderFramePost(() => {
      if (firstFrame === null) { firstFrame = performance.now(); perf.graph = { nodes: nodes.length, links: links.length, fetch_ms: times.fetched - times.started, first_frame_ms: firstFrame - times.started, settled_ms: null }; }
    })
    .onEngineStop(() => { if (perf.graph && perf.graph.settled_ms === null) { perf.graph.settled_ms = performance.now() - times.started; graph && graph.zoomToFit(300, 30); } });
  if (nodes.some((n) => n.kind === "cluster")) graph.d3Force("charge").strength(-160);
  window.pinkyGraph = graph;
}

// --- 4. review ------------------------------------------------------------------------------------------

async function reviewView() {
  const head = el("div", { class: "row" }, el("h1", {}, "Review"), el("span", { class: "muted small" }, "what needs attention, one click each; every change can be undone"));
  const stale = el("section", { id: "stale" }, spinner());
  const flagged = el("section", { id: "flagged" });
  const contradictions = el("section", { id: "contradictions" }, sectionHead("Possible contradictions"), spinner("comparing every note…"));
  const duplicates = el("section", { id: "duplicates" }, sectionHead("Duplicate candidates"), spinner("comparing every note…"));
  const gaps = el("section", { id: "gaps" });
  const learned = el("section", { id: "past-sessions" });
  const changes = el("section", { id: "changes" });
  fill(main, head, stale, flagged, learned, contradictions, duplicates, gaps, changes);
  api("/api/past-sessions").then((data) => {
    fill(learned, sectionHead("Learned in past sessions", data.candidates.length, "seen by " + data.command + ", never saved: save what is worth a note, dismiss the rest"),
      data.line ? el("div", { class: "small", id: "past-sessions-waiting" }, data.line) : null,
      data.candidates.length ? data.candidates.map(candidateCard) : empty(data.line ? "Nothing yet: take the sessions in first." : "No candidate notes."));
  }, (error) => fill(learned, empty(error.message)));
  api("/api/review", { limit: 100 }).then((data) => {
    fill(stale, sectionHead("Stale", data.stale_count, "unverified past their type's threshold, longest first"),
      data.stale.length ? data.stale.map(staleCard) : empty("Nothing stale."));
    fill(flagged, sectionHead("Flagged wrong or outdated", data.flagged.length, "by feedback, since the note last changed"),
      data.flagged.length ? data.flagged.map(flaggedCard) : empty("Nothing flagged."));
    fill(gaps, sectionHead("Knowledge gaps", data.gaps.length, "searches whose best hit was weak"),
      !data.telemetry ? empty("PINKY_TELEMETRY=0: no gaps are recorded.") : data.gaps.length ? data.gaps.map(gapCard) : empty("No open gaps."));
  }, (error) => fill(stale, empty(error.message)));
  api("/api/contradictions").then((data) => {
    fill(contradictions, sectionHead("Possible contradictions", data.count, "same key or subject, or nearly the same text with a differing value"),
      data.notice ? el("div", { class: "small muted" }, data.notice) : null,
      data.pairs.length ? data.pairs.map(contradictionCard) : empty("No contradictions found."));
    paintRels(contradictions);
  }, (error) => fill(contradictions, empty(error.message)));
  api("/api/duplicates").then((data) => {
    fill(duplicates, sectionHead("Duplicate candidates", data.count, "nearly the same meaning (cosine ≥ 0.8)"),
      data.notice ? el("div", { class: "small muted" }, data.notice) : null,
      data.pairs.length ? data.pairs.map(duplicateCard) : empty("No duplicates found."));
  }, (error) => fill(duplicates, empty(error.message)));
  api("/api/actions").then((data) => {
    fill(changes, sectionHead("Changes made here", data.actions.length, "this session; undo puts a note back as it was"),
      data.actions.length ? el("ul", { class: "links" }, data.actions.map((a) => el("li", { class: "row" },
        el("span", { class: a.undone ? "muted" : null }, a.label + (a.undone ? " (undone)" : "")), el("span", { class: "spacer" }),
        a.undone ? null : actionButton("Undo", () => undo(a.id))))) : empty("No changes yet."));
  });
}

function sectionHead(title, count, hint) {
  return el("div", { class: "section-head" }, el("h2", {}, title), count !== undefined ? el("span", { class: "count" }, String(count)) : null,
    hint ? el("span", { class: "small muted" }, hint) : null);
}

const archiveButton = (slug) => actionButton("Archive", () => {
  const why = prompt("Why archive it? (kept in its frontmatter)", "outdated");
  if (why && why.trim()) act("/api/archive", { slug, reason: why.trim() });
});

function staleCard(item) {
  return el("div", { class: "card", dataset: { slug: item.slug } },
    el("div", { class: "row" }, noteLink(item.slug, item.title), badge(item.type, "type"),
      badge(`unverified for ${item.age_days} days`, "stale"), el("span", { class: "spacer" }),
      actionButton("Verify", () => act("/api/verify", { slug: item.slug }), "primary"), archiveButton(item.slug)),
    el("div", { class: "small muted mono" }, item.path));
}

function flaggedCard(item) {
  return el("div", { class: "card", dataset: { slug: item.slug } },
    el("div", { class: "row" }, noteLink(item.slug, item.title), badge(item.verdict, "bad"), el("span", { class: "spacer" }),
      actionButton("Still holds: verify", () => act("/api/verify", { slug: item.slug })), archiveButton(item.slug)),
    el("div", { class: "small muted" }, `marked ${item.verdict} ${item.at ? item.at.slice(0, 10) : ""}`, item.query ? ` for “${item.query}”` : ""));
}

function contradictionCard(pair) {
  const side = (slug, path, which) => el("div", { class: "side" }, noteLink(slug, slug),
    el("div", { class: "small muted mono" }, path),
    pair.differences.map((d) => el("div", { class: "diff" }, badge(d.kind), el("span", { class: which }, which === "a" ? d.a : d.b),
      el("div", { class: "small muted" }, which === "a" ? d.context_a : d.context_b))));
  return el("div", { class: "card", dataset: { a: pair.a, b: pair.b } },
    el("div", { class: "small muted" }, pair.reason),
    el("div", { class: "pair" }, side(pair.a, pair.a_path, "a"), side(pair.b, pair.b_path, "b")),
    el("div", { class: "actions" },
      actionButton(`Keep the right one (${pair.b} supersedes ${pair.a})`, () => act("/api/supersede", { old: pair.a, new: pair.b })),
      actionButton(`Keep the left one (${pair.a} supersedes ${pair.b})`, () => act("/api/supersede", { old: pair.b, new: pair.a })),
      archiveButton(pair.a), archiveButton(pair.b)));
}

function duplicateCard(pair) {
  const side = (slug, title, path) => el("div", { class: "side" }, noteLink(slug, title), el("div", { class: "small muted mono" }, path));
  return el("div", { class: "card", dataset: { a: pair.a, b: pair.b } },
    el("div", { class: "small muted" }, `similarity ${pair.similarity}`),
    el("div", { class: "pair" }, side(pair.a, pair.a_title, pair.a_path), side(pair.b, pair.b_title, pair.b_path)),
    el("div", { class: "actions" },
      actionButton("Merge right into left", () => act("/api/merge", { keep: pair.a, other: pair.b })),
      actionButton("Merge left into right", () => act("/api/merge", { keep: pair.b, other: pair.a }))));
}

function candidateCard(item) {
  return el("div", { class: "card", dataset: { candidate: item.id } },
    el("div", { class: "row" }, badge(item.kind), badge(`a ${item.type}?`, "type"),
      el("span", { class: "small muted" }, `${item.when.slice(0, 16).replace("T", " ")} [${item.session}]`), el("span", { class: "spacer" }),
      actionButton("Dismiss", () => act("/api/dismiss", { id: item.id }))),
    el("div", {}, item.evidence),
    item.prompt ? el("div", { class: "small muted" }, "asked: " + item.prompt) : null,
    el("div", { class: "small muted" }, "keep it: the agent's brain_save, or pinky-brain save"));
}

function gapCard(gap) {
  const text = gap.query || `(query text not kept: PINKY_LOG_QUERIES=1 keeps it) ${gap.query_hash.slice(0, 10)}`;
  return el("div", { class: "card row" }, gap.query ? el("a", { href: "#/search?q=" + encodeURIComponent(gap.query) }, text) : el("span", { class: "muted" }, text),
    el("span", { class: "spacer" }), badge(`asked ${gap.count}×`), el("span", { class: "small muted" }, "last " + gap.last_seen.slice(0, 10)));
}

// --- 5. diary -------------------------------------------------------------------------------------------

async function diaryView() {
  const list = el("div", { id: "diary" });
  const more = el("button", { hidden: true }, "Older");
  fill(main, el("div", { class: "row" }, el("h1", {}, "Diary"), el("span", { class: "small muted" }, "days and their weekly and monthly rollups, newest first")), list, more);
  let offset = 0, month = null;
  const load = async () => {
    more.disabled = true;
    const data = await api("/api/diary", { offset });
    if (!data.total) fill(list, empty("No diary yet: the Stop hook writes one line per turn (HOOKS.md)."));
    for (const day of data.days) {
      const key = day.month;  // a week's "2026-W47" is no month: the server says which month it ends in
      if (key !== month) { month = key; add(list, el("div", { class: "month-head" }, key)); }
      add(list, el("div", { class: "card day " + day.kind, dataset: { slug: day.slug } },
        el("div", { class: "row" }, el("h3", {}, noteLink(day.slug, day.title)), badge(day.kind)),
        renderMarkdown(day.body, day.slug.startsWith("global/") ? "global" : "project", null),
        day.mentions.length ? el("div", { class: "chips" }, el("span", { class: "small muted" }, "mentions "),
          day.mentions.map((m) => noteLink(m.slug, m.title || m.slug))) : null));
    }
    offset += data.days.length;
    more.hidden = !data.more;
    more.disabled = false;
  };
  more.addEventListener("click", load);
  load().catch((error) => fill(list, empty(error.message)));
}

// --- start ----------------------------------------------------------------------------------------------

/* Sign in first when the address holds a code (also when a link is pasted into an open tab: the browser then
   only changes the fragment), then draw. */
function start() {
  signIn().catch((error) => toast(error.message, null, true)).finally(() => {
    api("/api/about").then((data) => {
      about = data;
      document.getElementById("project").textContent = data.project ? "project " + data.project + " + global" : "global brain";
      const list = document.getElementById("tags");
      if (list) fill(list, ...data.tags.map((t) => el("option", { value: t })));
    }, () => {});
    route();
  });
}
window.addEventListener("hashchange", () => (location.hash.startsWith("#sign-in=") ? start() : route()));
start();
