// errscan lookup in the browser: the rules of errscan/matching.py, over the templates
// of api/templates/REPO.json. A pasted message, `Type: message` line or traceback (a
// chain of them too) gives the records that could have raised it, best first:
// full matches at a frame of the traceback (the most literal first), then sites a frame
// names whose class is the type seen, then full matches elsewhere, then sites a frame
// names of a class not known to be it. (errscan lookup's last resort, close matches by
// similarity when nothing else is found, is not done here.)

const FRAME = /^\s*File "([^"]+)", line (\d+)(?:, in (\S+))?/gm;
const TYPED = /^((?:[A-Za-z_]\w*\.)*[A-Z]\w*): ?([\s\S]*)$/;
const BARE = /^(?:[A-Za-z_]\w*\.)*[A-Z]\w*$/;
const CHAINED = /^\s*(?:The above exception was the direct cause of the following exception:|During handling of the above exception, another exception occurred:)\s*$/m;

export function parseChain(text) {
  const parts = text.split(CHAINED).filter((part) => part.trim());
  return parts.length ? parts.map(parseOne) : [parseOne(text)];
}

function parseOne(text) {
  text = text.replace(/^\n+|\n+$/g, "");
  const found = [...text.matchAll(FRAME)];
  const frames = found.map((m) => [m[1], Number(m[2]), m[3] || ""]);
  if (frames.length || text.startsWith("Traceback")) {
    const last = found[found.length - 1];
    const tail = frames.length ? text.slice(last.index + last[0].length) : text;
    const lines = tail.split("\n").slice(1);
    const start = lines.findIndex((line) => line.trim() && !/^\s/.test(line));
    text = start >= 0 ? lines.slice(start).join("\n").replace(/\s+$/, "") : tail.trim();
  }
  const typed = TYPED.exec(text);
  if (typed && !typed[1].includes(" ")) {
    return { exception: typed[1], message: typed[2], frames };
  }
  // Python prints an empty message's class alone
  if (frames.length && BARE.test(text)) return { exception: text, message: "", frames };
  return { exception: null, message: text, frames };
}

// Whether the literal runs, placeholders standing for any text between them, make up
// the whole message: a greedy search left to right, as matching._matches.
export function matches(runs, message) {
  if (runs.length === 1) return message === runs[0];
  const first = runs[0];
  const last = runs[runs.length - 1];
  const end = message.length - last.length;
  if (end < first.length || !message.startsWith(first) || !message.endsWith(last)) return false;
  let position = first.length;
  for (const run of runs.slice(1, -1)) {
    const found = message.indexOf(run, position);
    if (found < 0 || found + run.length > end) return false;
    position = found + run.length;
  }
  return true;
}

export function sameFile(shown, file) {
  const a = shown.replace(/\\/g, "/").split("/");
  const b = file.split("/");
  let common = 0;
  while (common < Math.min(a.length, b.length) && a[a.length - 1 - common] === b[b.length - 1 - common]) {
    common += 1;
  }
  return common >= Math.min(b.length, 2);
}

function simple(name) {
  return name.split(".").pop();
}

function frameDepth(record, seen, builtins) {
  const frames = [...seen.frames].reverse();
  for (let depth = 0; depth < frames.length; depth += 1) {
    const [path, line, fn] = frames[depth];
    if (!sameFile(path, record.file)) continue;
    if (record.line <= line && line <= record.end_line) return depth;
    if (record.kind === "reraise" && fn === record.function.split(".").pop()) {
      const caught = new Set(record.reraises.map(simple));
      const seenName = simple(seen.exception || "");
      const ancestors = builtins[seenName] || [];
      if (!seen.exception || caught.has(seenName) || ancestors.some((a) => caught.has(a))) {
        return depth;
      }
    }
  }
  return null;
}

// The simple names of the classes the type seen is, itself included: a repository
// class with its bases as written, a builtin with its MRO; null where nothing knows
// the type (it then filters nothing).
function ancestorsOf(seen, index) {
  if (!seen.exception) return null;
  const name = simple(seen.exception);
  const found = new Set(index.bases.get(name) || []);
  (index.builtins[name] || []).forEach((base) => found.add(base));
  return found.size ? found : null;
}

function sameType(ancestors, record) {
  return ancestors === null || record.kind === "reraise" || record.names.some((n) => ancestors.has(n));
}

export function makeIndex(data) {
  const bases = new Map();
  for (const record of data.records) {
    if (!record.cls) continue;
    if (!bases.has(record.cls)) bases.set(record.cls, new Set([record.cls]));
    record.bases.forEach((base) => bases.get(record.cls).add(base));
  }
  return { records: data.records, builtins: data.builtins, bases };
}

function compare(a, b) {
  for (let i = 0; i < a.length; i += 1) {
    if (a[i] < b[i]) return -1;
    if (a[i] > b[i]) return 1;
  }
  return 0;
}

// Whether a frame deeper than `depth` is in a file of the records, and not at another
// re-raise: the traceback shows where in the repository the error began.
function beganHere(seen, depth, index) {
  const deeper = [...seen.frames].reverse().slice(0, depth);
  return deeper.some(([path, line]) => {
    const same = index.records.filter((r) => sameFile(path, r.file));
    return same.length > 0 && !same.some((r) => r.kind === "reraise" && r.line <= line && line <= r.end_line);
  });
}

function lookupOne(seen, index) {
  const ancestors = ancestorsOf(seen, index);
  const full = [];
  for (const record of index.records) {
    const depth = seen.frames.length ? frameDepth(record, seen, index.builtins) : null;
    if (record.message === null) {
      if (depth !== null && record.kind === "reraise" && !beganHere(seen, depth, index)) {
        // where the error passed, and where it began is not shown: after full matches
        // elsewhere with literal text, before those with none
        full.push([[2, 0, 0, depth, 1, record.id], { record, kind: "frame" }]);
      } else if (depth !== null) {
        const rank = sameType(ancestors, record) && ancestors !== null ? 1 : 3;
        full.push([[rank, depth, 0, 0, 1, record.id], { record, kind: "frame" }]);
      }
      continue;
    }
    if (!sameType(ancestors, record)) continue;
    const literal = record.literal;
    // an empty template is exact: it matches the empty message alone
    const matched = (literal || record.message === "" || (ancestors !== null && seen.message.trim()))
      && record.templates.some((runs) => matches(runs, seen.message));
    if (matched) {
      const key = [depth !== null ? 0 : 2, literal ? 0 : 1, -literal, depth || 0, seen.exception ? 0 : 1, record.id];
      full.push([key, { record, kind: "full" }]);
    } else if (depth !== null && ancestors !== null) {
      full.push([[1, depth, 0, 0, 0, record.id], { record, kind: "frame" }]);
    }
  }
  full.sort((a, b) => compare(a[0], b[0]));
  return full.map((item) => item[1]);
}

// The records behind what a user saw, best first: for a chain, those of the last
// exception, then those of the earlier ones.
export function lookup(text, index) {
  const chain = parseChain(text);
  const found = [];
  const seenIds = new Set();
  for (const seen of chain.reverse()) {
    for (const match of lookupOne(seen, index)) {
      if (!seenIds.has(match.record.id)) {
        seenIds.add(match.record.id);
        found.push(match);
      }
    }
  }
  return found;
}
