// The index page's search, over the static shards errscan/site/search.py writes: the
// words of a query (letters and digits, lowercased, as the index splits them) ranked
// by their summed rarity, so a runtime message finds its template; each hit shown
// from its error's JSON.
const input = globalThis.document?.getElementById("q");
const hits = globalThis.document?.getElementById("hits");
const root = new URL("../", import.meta.url);
const cache = new Map();

export function words(text) {
  const found = new Set();
  for (const word of text.toLowerCase().match(/[\p{L}\p{N}]+/gu) || []) {
    if (word.length > 1 || /^\p{N}$/u.test(word)) found.add(word);
  }
  return [...found];
}

function shard(word) {
  const head = word.slice(0, 2);
  return /^[a-z0-9]+$/.test(head) ? head : `u${word.codePointAt(0).toString(16)}`;
}

async function json(path) {
  if (!cache.has(path)) {
    cache.set(path, fetch(new URL(path, root)).then((r) => (r.ok ? r.json() : {})));
  }
  return cache.get(path);
}

export async function search(query, limit = 20) {
  const total = (await json("search/meta.json")).errors || 1;
  const scores = new Map();
  for (const word of words(query)) {
    const ids = (await json(`search/words/${shard(word)}.json`))[word] || [];
    const weight = Math.log(1 + total / ids.length);
    for (const id of ids) scores.set(id, (scores.get(id) || 0) + weight);
  }
  const ranked = [...scores].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1));
  const found = [];
  const records = ranked.slice(0, limit).map(([id]) => json(`api/errors/${id}.json`));
  for (const answer of await Promise.all(records)) {
    const record = answer.record;
    if (!record) continue;
    found.push({
      id: record.id,
      repo: record.repo,
      exception: simpleName(record.exception),
      message: cut(record.message),
      href: `errors/${record.id}.html`,
    });
  }
  return found;
}

// What a hit shows of a record, as the pages show it (errscan/site/page.py's
// simple_name, errscan/site/render.py's cut).
export function simpleName(exception) {
  return (exception || "re-raise").split(".").pop();
}

// Python's whitespace (str.split()), which is not JavaScript's \s
const SPACE = /[\t\n\v\f\r \x1c-\x1f\x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]+/u;

export function cut(text, limit = 60) {
  const line = (text || "(no message)").split(SPACE).filter(Boolean).join(" ");
  const chars = [...line];
  return chars.length <= limit ? line : `${chars.slice(0, limit).join("").replace(/ +$/u, "")}…`;
}

async function show() {
  const query = input.value;
  const found = query.trim() ? await search(query) : [];
  if (query !== input.value) return; // a later keystroke has its own answer
  hits.replaceChildren();
  for (const hit of found) {
    const item = document.createElement("li");
    const link = document.createElement("a");
    link.href = new URL(hit.href, root).href;
    link.textContent = `${hit.exception}: ${hit.message}`;
    const where = document.createElement("span");
    where.className = "muted";
    where.textContent = ` ${hit.repo} · ${hit.id}`;
    item.append(link, where);
    hits.append(item);
  }
}

if (input) {
  input.form.addEventListener("submit", (event) => { event.preventDefault(); show(); });
  input.addEventListener("input", () => { show(); });
}
