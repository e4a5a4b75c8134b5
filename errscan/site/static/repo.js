// A repository's page: filters by kind and exception, grouping, and the paste box.
import { lookup, makeIndex } from "./lookup.js";

const kind = document.getElementById("kind");
const exception = document.getElementById("exception");
const group = document.getElementById("group");

// Code points, as the build orders names (SQLite's binary order of UTF-8), not UTF-16 units.
function byCodePoint(a, b) {
  const x = [...a].map((c) => c.codePointAt(0));
  const y = [...b].map((c) => c.codePointAt(0));
  for (let i = 0; i < Math.min(x.length, y.length); i++) {
    if (x[i] !== y[i]) return x[i] - y[i];
  }
  return x.length - y.length;
}

// The grouping by exception, made from the one by file the first time it is asked for:
// each exception's errors in the order of the lists by file (file, line, id), the
// exceptions by name.
function groupByException() {
  const section = document.querySelector('section.grouping[data-grouping="exception"]');
  if (section.dataset.made) return;
  const groups = new Map();
  for (const item of document.querySelectorAll('section[data-grouping="file"] li[data-kind]')) {
    const name = item.dataset.exception;
    if (!groups.has(name)) groups.set(name, []);
    groups.get(name).push(item.cloneNode(true));
  }
  for (const name of [...groups.keys()].sort(byCodePoint)) {
    const details = document.createElement("details");
    details.className = "group";
    details.open = true;
    const summary = document.createElement("summary");
    const count = document.createElement("span");
    count.className = "muted";
    count.textContent = `(${groups.get(name).length})`;
    summary.append(`${name} `, count);
    const list = document.createElement("ul");
    list.className = "errors";
    list.append(...groups.get(name));
    details.append(summary, list);
    section.append(details);
  }
  section.dataset.made = "1";
}

function filter() {
  if (group.value === "exception") groupByException();
  for (const item of document.querySelectorAll("li[data-kind]")) {
    const shown = (!kind.value || item.dataset.kind === kind.value)
      && (!exception.value || item.dataset.exception === exception.value);
    item.hidden = !shown;
  }
  for (const section of document.querySelectorAll("section.grouping")) {
    section.hidden = section.dataset.grouping !== group.value;
  }
  for (const details of document.querySelectorAll("details.group")) {
    details.hidden = !details.querySelector("li[data-kind]:not([hidden])");
  }
}
[kind, exception, group].forEach((select) => select.addEventListener("change", filter));

const paste = document.getElementById("paste");
const hits = document.getElementById("paste-hits");
const config = JSON.parse(document.getElementById("config").textContent);
let index = null;

async function find() {
  if (index === null) {
    index = makeIndex(await (await fetch(config.templates)).json());
  }
  const text = paste.value;
  hits.replaceChildren();
  if (!text.trim()) return;
  const found = lookup(text, index).slice(0, 10);
  if (!found.length) {
    const none = document.createElement("li");
    none.textContent = "No error of this repository matches.";
    hits.append(none);
  }
  for (const match of found) {
    const item = document.createElement("li");
    const link = document.createElement("a");
    link.href = `${config.root}errors/${encodeURIComponent(match.record.id)}.html`;
    link.textContent = `${match.record.names.find((n) => n) || "re-raise"}: ${match.record.message ?? "(no message)"}`;
    const where = document.createElement("span");
    where.className = "muted";
    where.textContent = ` ${match.record.file}:${match.record.line} (${match.kind})`;
    item.append(link, where);
    hits.append(item);
  }
}
paste.addEventListener("input", () => { find(); });
