// A repository's page: filters by kind and exception, grouping, and the paste box.
import { lookup, makeIndex } from "./lookup.js";

const kind = document.getElementById("kind");
const exception = document.getElementById("exception");
const group = document.getElementById("group");

function filter() {
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
