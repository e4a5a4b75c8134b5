"""Whole-scan knowledge built from per-file summaries: module names, classes, factories.

index = Index.of({"pkg/errors.py": summary, "pkg/api.py": summary2})
index.resolve("pkg/api.py", "errors.ConfigError")  ->  "pkg.errors.ConfigError"
index.exception_info("pkg.errors.ConfigError").bases  ->  ("ValueError", "Exception")
"""

from __future__ import annotations

import contextlib
import itertools
from collections import OrderedDict
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import replace
from typing import Protocol, TypeVar

from errscan.analyzer import stdlib
from errscan.analyzer.files import Listing
from errscan.builtin_exceptions import BUILTIN_EXCEPTIONS
from errscan.extractors.exception import looks_like_class_name
from errscan.extractors.summary import ATTRS_FORMAT, UNKNOWN_STR
from errscan.frozen import frozen
from errscan.models import ClassInfo, FactoryCall, FactoryTable, FileSummary, Import, MessagePart

_STOP = ("Exception", "BaseException")
# builtin exceptions whose str() is BaseException's own (the args: one as str(), several
# as their tuple), for a subclass whose __init__ never calls theirs
_OWN_STR = frozenset(("KeyError", "OSError", "SyntaxError", "UnicodeError"))
_UNICODE_STR = frozenset(
    f"builtins.{name}"
    for name in ("UnicodeEncodeError", "UnicodeDecodeError", "UnicodeTranslateError")
)
_PLAIN_STR = frozenset(
    name
    for name, classes in BUILTIN_EXCEPTIONS.items()
    if (_OWN_STR.isdisjoint(classes) or name == "UnicodeError") and "ExceptionGroup" not in name
)
_MAX_HOPS = 16
_NOWHERE = 1 << 30  # Index._low where a resolution came back to none under way
_K = TypeVar("_K")
_V = TypeVar("_V")
# files whose imports and classes are kept decoded at once: networkx's names are asked
# through the star imports of some 150 modules (32 decoded them again for every name,
# 10% of its CPU); the linking workers of sympy with its tests peak at 60 MB either way
_FACTS_CACHED = 256
_REMEMBERED = 512  # answers kept, of each kind (more only holds memory: hits are local)
# answers kept below the top of a resolution: those of the modules re-exporting a name
# are asked for by every file that uses it through them
_REMEMBERED_BELOW = 4096


def module_name(path: str, is_package: Callable[[str], bool]) -> str:
    """A file's importable module name: packages are folders with an __init__.py
    (`is_package` says which)."""
    parts = path.rsplit(".", 1)[0].split("/")
    if parts[-1] == "__init__":
        parts = parts[:-1]
    folders = path.split("/")[:-1]
    # the package root: climb while the folder is a package
    top = len(folders)
    while top > 0 and is_package("/".join(folders[:top])):
        top -= 1
    # a top-level __init__.py: the package is the unnamed repository folder itself
    return ".".join(parts[top:]) or (parts[-1] if parts else "__init__")


class Modules(Protocol):
    """The module name of each file of a scan, and the file of each module."""

    def module_of(self, path: str) -> str | None:
        """The module name of a file of the scan."""

    def file_of(self, module: str) -> str | None:
        """The file that is the module `module` (a module over its stub, else the first
        path)."""


class HeldTable:
    """A ModuleTable's rows held in memory, answering as the table does (for a pool
    worker, which cannot read the main process's tables)."""

    def __init__(self, rows: Iterable[tuple[str, str, bool]]) -> None:
        self._modules: dict[str, str] = {}
        self._files: dict[str, str] = {}
        for path, name, _stub in sorted(rows, key=lambda row: (row[2], row[0])):
            self._modules[path] = name
            self._files.setdefault(name, path)  # a module over its stub, else the first path

    def module_of(self, path: str) -> str | None:
        return self._modules.get(path)

    def file_of(self, module: str) -> str | None:
        return self._files.get(module)


class HeldModules(HeldTable):
    """The modules of a few files, held in memory (one file, or a test)."""

    def __init__(self, paths: Iterable[str]) -> None:
        ordered = sorted(set(paths))
        packages = {path.rsplit("/", 1)[0] for path in ordered if _is_package_init(path)}
        is_package = packages.__contains__
        super().__init__((p, module_name(p, is_package), p.endswith(".pyi")) for p in ordered)


def namespace_candidates(listing: Listing) -> list[tuple[str, list[str]]]:
    """Folders without an __init__.py that hold a package (`google/` of
    `google/auth/__init__.py`), each with its packages' names: PEP 420 namespace
    portions where the code imports them so (see namespaces)."""
    found: dict[str, set[str]] = {}
    for (path,) in listing.db.execute(
        "SELECT path FROM file WHERE path LIKE '%/__init__.py' OR path LIKE '%/__init__.pyi'"
    ):
        package = str(path).rsplit("/", 1)[0]
        parent, _, name = package.rpartition("/")
        if parent and name.isidentifier() and parent.rsplit("/", 1)[-1].isidentifier():
            found.setdefault(parent, set()).add(name)
    return [
        (folder, sorted(names))
        for folder, names in sorted(found.items())
        if not _holds_init(listing, folder)
    ]


HELD_MODULES = 20_000  # files whose modules a ModuleTable holds in memory too


def _holds_init(listing: Listing, folder: str) -> bool:
    """Whether the listing has an __init__.py (or .pyi) in `folder`: a package."""
    return bool(
        listing.db.execute(
            "SELECT EXISTS (SELECT 1 FROM file WHERE path IN (?, ?))",
            (f"{folder}/__init__.py", f"{folder}/__init__.pyi"),
        ).fetchone()[0]
    )


def namespaces(
    candidates: Sequence[tuple[str, list[str]]],
    files_under: Callable[[str], Iterable[str]],
    imports_of: Callable[[str], Iterable[Import]],
    most: int = 32,
) -> list[str]:
    """The candidate folders the scan's code imports as namespace portions: a file
    below one (of the first `most`) imports `NAME.PACKAGE...` absolutely, NAME the
    folder's name and PACKAGE one of its packages (`from google.auth import x`)."""
    found = []
    for folder, packages in candidates:
        name = folder.rsplit("/", 1)[-1]
        prefixes = tuple(f"{name}.{package}" for package in packages)
        for path in itertools.islice(files_under(folder), most):
            if any(
                imported.level == 0
                and (imported.module == prefix or imported.module.startswith(prefix + ".")
                     or f"{imported.module}.{imported.name}" == prefix)
                for imported in imports_of(path)
                for prefix in prefixes
            ):  # fmt: skip
                found.append(folder)
                break
    return found


class ModuleTable:
    """The modules of a scan's files, in a table of its listing's database: memory
    holds none of them past HELD_MODULES files (below that, a copy by path too, which a
    first scan asks of every file: Django's 875 took some 4 ms of queries)."""

    def __init__(self, listing: Listing, namespaces: Collection[str] = ()) -> None:
        """`namespaces`: folders without an __init__.py that are portions of a PEP 420
        namespace package (`google/` of `google/auth/`): part of their modules' names."""
        self._listing = listing
        self._db = db = listing.db
        self._namespaces = frozenset(namespaces)
        self._packages: dict[str, bool] = {}
        self._held: dict[str, str] | None = None
        self._rows: list[tuple[str, str, bool]] | None = None
        self._inits: set[str] | None = None
        db.execute(
            "CREATE TABLE module (path TEXT PRIMARY KEY, name TEXT NOT NULL, "
            "stub INTEGER NOT NULL) WITHOUT ROWID"
        )
        small = len(listing) <= HELD_MODULES
        paths: Iterable[str] = list(listing.paths()) if small else listing.paths()
        if small:
            self._inits = {
                folder
                for folder, _, name in (path.rpartition("/") for path in paths)
                if name in ("__init__.py", "__init__.pyi")
            }
        rows: Iterable[tuple[str, str, bool]] = (
            (path, module_name(path, self._is_package), path.endswith(".pyi")) for path in paths
        )
        if small:
            rows = self._rows = list(rows)
            self._held = {path: name for path, name, _ in self._rows}
        db.execute("BEGIN")
        db.executemany("INSERT INTO module VALUES (?, ?, ?)", rows)
        db.execute("COMMIT")
        db.execute("CREATE INDEX module_name ON module (name, stub, path)")

    def _is_package(self, folder: str) -> bool:
        if folder in self._namespaces:
            return True
        if self._inits is not None:
            return folder in self._inits
        memo = self._packages
        if folder not in memo:
            if len(memo) >= 256:  # paths come sorted: a folder's files come together
                memo.clear()
            memo[folder] = _holds_init(self._listing, folder)
        return memo[folder]

    def rows(self) -> list[tuple[str, str, bool]]:
        """Every file's (path, module name, whether a stub), by path."""
        if self._rows is not None:
            return list(self._rows)
        found = self._db.execute("SELECT path, name, stub FROM module ORDER BY path")
        return [(path, name, bool(stub)) for path, name, stub in found]

    def module_of(self, path: str) -> str | None:
        if self._held is not None:
            return self._held.get(path)
        found = self._db.execute("SELECT name FROM module WHERE path = ?", (path,)).fetchone()
        return None if found is None else str(found[0])

    def file_of(self, module: str) -> str | None:
        found = self._db.execute(
            "SELECT path FROM module WHERE name = ? ORDER BY stub, path LIMIT 1", (module,)
        ).fetchone()
        return None if found is None else str(found[0])


@frozen
class ExceptionInfo:
    qualname: str | None
    bases: tuple[str, ...]
    doc: str | None
    init: ClassInfo | None  # the class (or ancestor) whose __init__ composes the message
    # an ancestor above `init` whose __str__ composes the text from what `init` passes on
    # to super().__init__ (a subclass's __init__ feeding its base's __str__)
    str_of: ClassInfo | None = None
    # the ancestors above `init` whose __init__ each composes the text from what the one
    # below passes on (urllib3's PoolError: f"{pool}: {message}"), nearest first
    composed_by: tuple[ClassInfo, ...] = ()
    # the topmost __init__ (init's, or the last of composed_by) passes several arguments
    # on to a builtin whose str() is BaseException's: the text is their tuple
    args_of_init: bool = False
    # no __init__ read, and one on the way that errscan could not read: what the call
    # passes is not known to be the text
    init_unread: bool = False
    # the class's __init__ keeps no message of its own: str() is that of the arguments
    args_str: bool = False
    # the class constants the class raised has, its own and inherited: (name, repr)
    constants: tuple[tuple[str, str], ...] = ()
    # attributes an __init__ of the class's line sets from what its caller passes
    caller_set: frozenset[str] = frozenset()
    # the builtin whose __init__ and __str__ the class keeps (none of its line defines
    # either), as `KeyError`: its str() rules are the class's
    builtin_base: str | None = None
    # the text the topmost __init__ composes goes, alone, to KeyError's __init__, and no
    # __str__ is on the way: str() is its repr (tomlkit's NonExistentKey(KeyError, ...))
    key_quoted: bool = False
    # an __init__ below `init` that errscan could not read passes on what the call gave,
    # made into something else (pathvalidate's `super().__init__(args, **kwargs)`)
    init_fed_unread: bool = False
    # where a class of the line formats a text with the instance's attributes
    # (summary.ATTRS_FORMAT): the classes whose __init__ runs, from the one raised up to
    # that one, each for its ClassInfo.init_setup
    runs: tuple[ClassInfo, ...] = ()


@frozen
class StoredSummary:
    """A file's summary as read back from the result cache (cache.decode_summary): its
    classes by qualname, each of which may be made into a ClassInfo only when asked for
    (linking asks of a few of the many classes the summaries it reads hold)."""

    imports: tuple[Import, ...]
    classes: Mapping[str, ClassInfo]
    factories: tuple[tuple[str, str], ...]
    factory_calls: tuple[FactoryCall, ...]
    aliases: tuple[tuple[str, str], ...]
    partial: bool = False
    tables: tuple[FactoryTable, ...] = ()


@frozen
class _FileFacts:
    imports: dict[str, Import]
    stars: tuple[Import, ...]  # `from .exceptions import *`, in source order
    aliases: dict[str, str]  # `ConnectionError = ProtocolError`: the name as written
    classes: Mapping[str, ClassInfo]  # by qualname inside the module
    factories: dict[str, str]  # function qualname -> the class it makes, as written
    # function qualname -> its parameters and the arguments of the class it builds
    factory_calls: dict[str, tuple[tuple[str, ...], tuple[tuple[str | None, str], ...] | None]]
    partial: bool  # some details deferred (FileSummary.partial)
    # factory qualname -> the parameter it looks its class up by, and the table's classes
    tables: dict[str, tuple[str, dict[str, str]]]


class Index:
    """Names of every class and factory in the scan, and where each is defined.

    Nothing is held for the whole scan: module names are asked of `modules` (a table in
    the scan's listing), where a class or factory is defined of `defined` (a table in
    the scan's state), and a file's imports and class details are loaded back (from the
    result cache) when a resolution needs them, a few dozen files' worth at a time.
    """

    def __init__(
        self,
        modules: Modules,
        load: Callable[[str], FileSummary | StoredSummary | None],
        defined: Callable[[str], str | None] | None = None,
        complete: Callable[[str], FileSummary | StoredSummary | None] | None = None,
    ) -> None:
        """`modules`: the scan's files. `load`: a file's summary. `defined`: the file
        defining a name, given as `c:NAME` (a class) or `f:NAME` (a factory) and chosen
        as `claims` would, where the names live outside (the scan's state); else
        `register` gives them. `complete`: a file's whole summary, none of it deferred,
        for what a partial one `load` gave lacks (default: `load`'s again)."""
        self._modules = modules
        self._module_memo: dict[str, str | None] = {}
        self._defined: dict[str, str] = {}
        self._lookup = defined or self._defined.get
        self._load = load
        self._complete = complete or load
        self._facts_cache: OrderedDict[str, _FileFacts] = OrderedDict()
        self._memo: dict[str, tuple[ExceptionInfo, frozenset[str]]] = {}
        self._resolved: dict[tuple[str, str], tuple[str | None, frozenset[str]]] = {}
        # below the top (resolve's hops > 0): each answer, what it read, and how many
        # hops further down working it out went (_resolve_below)
        self._below: dict[tuple[str, str], tuple[str | None, frozenset[str], int]] = {}
        self._deepest = 0  # the most hops the resolution under way has gone
        self._stars: dict[str, tuple[str, ...]] = {}  # _star_files, by path
        self._cut = False  # whether the resolution under way met the hop limit
        # the resolutions under way, each at its depth among them (_resolve), and the
        # shallowest of them the one under way came back to (_NOWHERE: none)
        self._active: dict[tuple[str, str], int] = {}
        self._low = _NOWHERE
        self._reading: list[set[str]] = []  # files read, per answer being worked out

    def module_of(self, path: str) -> str | None:
        """The module name of a file of the scan."""
        if path in self._module_memo:  # the file being linked, asked about again and again
            return self._module_memo[path]
        found = self._modules.module_of(path)
        if len(self._module_memo) >= 64:
            self._module_memo.clear()
        self._module_memo[path] = found
        return found

    def file_of(self, module: str) -> str | None:
        """The file that is the module `module` (a module over its stub)."""
        return self._modules.file_of(module)

    @classmethod
    def of(cls, summaries: Mapping[str, FileSummary]) -> Index:
        """An index over summaries held in memory (one file, or a test)."""
        index = cls(HeldModules(summaries), summaries.get)
        for path, summary in summaries.items():
            classes = [c.qualname for c in summary.classes]
            index.register(path, classes, [f for f, _ in summary.factories])
        return index

    def register(self, path: str, classes: Sequence[str], factories: Sequence[str]) -> None:
        """Note the classes and factories a file defines, in an index without `defined`."""
        for name in self.defines(path, classes, factories):
            held = self._defined.get(name)
            if held is None or claims(path, held):
                self._defined[name] = path

    def defines(self, path: str, classes: Sequence[str], factories: Sequence[str]) -> set[str]:
        """The names a file's classes and factories take in the scan, as `reads` gives them."""
        module = self.module_of(path)
        if module is None:
            return set()
        return {f"c:{module}.{c}" for c in classes} | {f"f:{module}.{f}" for f in factories}

    @contextlib.contextmanager
    def reads(self) -> Iterator[set[str]]:
        """What the answers given inside the block depend on: `p:PATH` for a file's
        summary, `c:NAME` and `f:NAME` for a class or factory name looked up, found or
        not (a remembered answer counts what it was worked out from)."""
        self._reading.append(set())
        try:
            yield self._reading[-1]
        finally:
            done = self._reading.pop()
            if self._reading:
                self._reading[-1].update(done)

    def _remembered(self, memo: dict[_K, tuple[_V, frozenset[str]]], key: _K,
                    work: Callable[[], _V]) -> _V:  # fmt: skip
        found = memo.get(key)
        if found is None:
            with self.reads() as read:
                value = work()
            if len(memo) >= _REMEMBERED:  # memory stays flat: start over, rarely
                memo.clear()
            found = memo[key] = (value, frozenset(read))
        elif self._reading:
            self._reading[-1].update(found[1])
        return found[0]

    def _class_file(self, qualified: str) -> str | None:
        if self._reading:
            self._reading[-1].add(f"c:{qualified}")
        return self._lookup(f"c:{qualified}")

    def _factory_file(self, qualified: str) -> str | None:
        if self._reading:
            self._reading[-1].add(f"f:{qualified}")
        return self._lookup(f"f:{qualified}")

    def _facts(self, path: str) -> _FileFacts:
        if self._reading:
            self._reading[-1].add(f"p:{path}")
        facts = self._facts_cache.get(path)
        if facts is not None:
            self._facts_cache.move_to_end(path)
            return facts
        return self._remember(path, self._load(path) or FileSummary())

    def _remember(self, path: str, summary: FileSummary | StoredSummary) -> _FileFacts:
        classes = summary.classes
        facts = _FileFacts(
            imports={i.local: i for i in summary.imports if i.local != "*"},
            stars=tuple(i for i in summary.imports if i.local == "*"),
            aliases=dict(summary.aliases),
            classes=classes if isinstance(classes, Mapping) else {c.qualname: c for c in classes},
            factories=dict(summary.factories),
            factory_calls={name: (ps, built) for name, ps, built in summary.factory_calls},
            partial=summary.partial,
            tables={name: (param, dict(entries)) for name, param, entries in summary.tables},
        )
        self._facts_cache[path] = facts
        if len(self._facts_cache) > _FACTS_CACHED:
            self._facts_cache.popitem(last=False)
        return facts

    def class_info(self, qualified: str) -> ClassInfo | None:
        """The class of that name of the repository; its details maybe deferred."""
        return self._class(qualified, detailed=False)

    def _detailed(self, qualified: str) -> ClassInfo | None:
        """class_info, with its details read where they were deferred."""
        return self._class(qualified, detailed=True)

    def _class(self, qualified: str, detailed: bool) -> ClassInfo | None:
        path = self._class_file(qualified)
        if path is None:
            return None
        name = qualified[len(self._module(path)) + 1 :]
        found = self._facts(path).classes.get(name)
        if found is None or not found.deferred or not detailed:
            return found
        return self._completed(path).classes.get(name, found)

    def _completed(self, path: str) -> _FileFacts:
        """A file's facts, none of them deferred: its whole summary read where the one
        loaded is partial (a file may then be read twice, never its details guessed).
        Where it cannot be read whole now (the time limit), each deferred class is one
        whose __init__ errscan could not read, and each deferred factory call unknown."""
        facts = self._facts(path)
        if not facts.partial:
            return facts
        whole = self._complete(path)
        if whole is not None and not whole.partial:
            return self._remember(path, whole)
        unread = {
            qualname: replace(cls, super_args=_UNREAD_INIT, deferred=False) if cls.deferred else cls
            for qualname, cls in facts.classes.items()
        }
        self._facts_cache[path] = facts = replace(facts, classes=unread, partial=False)
        return facts

    def local_class(self, path: str, function: str, name: str) -> str | None:
        """The class `name` names in `function` of `path` where a function around it (or
        it) defines one: `class Done(Exception)` in `Server.arun`, raised there or in a
        function nested in it, is `MODULE.Server.arun.<locals>.Done`."""
        module = self.module_of(path) if function else None
        if module is None or not name.isidentifier():
            return None
        classes = self._facts(path).classes  # a local class is in the file that uses it
        parts = function.split(".")
        for end in range(len(parts), 0, -1):
            if parts[end - 1] == "<locals>":
                continue
            local = f"{'.'.join(parts[:end])}.<locals>.{name}"
            if local in classes:
                return f"{module}.{local}"
        return None

    def resolve(self, path: str, dotted: str, hops: int = 0) -> str | None:
        """The fully qualified name `dotted`, as written in file `path`, refers to."""
        if hops == 0:
            return self._remembered(
                self._resolved, (path, dotted), lambda: self._resolve(path, dotted, 0)
            )
        return self._resolve_below(path, dotted, hops)

    def _resolve_below(self, path: str, dotted: str, hops: int) -> str | None:
        """resolve `hops` down a chain of re-exports (imports, aliases, star imports),
        remembered as the top answers are: networkx's files reach its exceptions
        (`nx.NetworkXError`) through the star imports of `networkx/__init__.py`, some
        150 modules deep, which were walked again for each file and name (92% of its
        linking). An answer is given again only where working it out anew would not
        meet the hop limit either, and one that met the limit, or came back to a
        resolution under way above it (_resolve), is not kept, so that no answer
        depends on what was asked before it."""
        key = (path, dotted)
        kept = self._below.get(key)
        if kept is not None and hops + kept[2] <= _MAX_HOPS:
            found, read, depth = kept
            if self._reading:
                self._reading[-1].update(read)
            self._deepest = max(self._deepest, hops + depth)
            return found
        outer = self._deepest, self._cut, self._low
        self._deepest, self._cut, self._low = hops, False, _NOWHERE
        with self.reads() as reading:
            found = self._resolve(path, dotted, hops)
        deepest, cut, low = self._deepest, self._cut, self._low
        self._deepest, self._cut = max(outer[0], deepest), outer[1] or cut
        self._low = min(outer[2], low)
        # this one's depth among those under way is how many are under way without it
        if not cut and low >= len(self._active):
            if len(self._below) >= _REMEMBERED_BELOW:  # memory stays flat
                self._below.clear()
            self._below[key] = (found, frozenset(reading), deepest - hops)
        return found

    def _resolve(self, path: str, dotted: str, hops: int) -> str | None:
        """A name asked again of a file while it is being worked out there gives None:
        the name is what the file's other bindings make it. networkx's
        `networkx/__init__.py` binds `NetworkXError` by `from networkx.exception import
        *`, then by `from networkx.algorithms import *` again, whose module
        `reciprocity.py` has `from networkx import NetworkXError`; that cycle went on to
        the hop limit, and 469 of its 1,115 records gave `networkx.NetworkXError`,
        without its bases or docstring."""
        if hops > _MAX_HOPS:
            self._cut = True
            return None
        key = (path, dotted)
        depth = self._active.get(key)
        if depth is not None:
            self._low = min(self._low, depth)
            return None
        self._active[key] = len(self._active)
        try:
            return self._resolve_here(path, dotted, hops)
        finally:
            del self._active[key]

    def _resolve_here(self, path: str, dotted: str, hops: int) -> str | None:
        self._deepest = max(self._deepest, hops)
        module = self.module_of(path)
        if module is None:
            return None
        first, _, rest = dotted.partition(".")
        if self._class_file(f"{module}.{first}") is not None:
            return self._canonical(f"{module}.{dotted}", hops)
        imported = self._facts(path).imports.get(first)
        if imported is not None:
            target = self._absolute(path, imported)
            if target is None:
                return None
            return self._canonical(f"{target}.{rest}" if rest else target, hops)
        alias = self._facts(path).aliases.get(first)
        if alias is not None:  # `ConnectionError = ProtocolError`: what that name is
            return self.resolve(path, f"{alias}.{rest}" if rest else alias, hops + 1)
        found = self._starred(path, dotted, hops)
        if found is not None:
            return found
        if first in BUILTIN_EXCEPTIONS and not rest:
            return f"builtins.{first}"
        return None

    def _starred(self, path: str, dotted: str, hops: int) -> str | None:
        """What `dotted` is through the file's `from module import *` of repository
        modules, the last first (it binds over the earlier); a private name is never
        bound so."""
        if dotted.startswith("_"):
            return None
        stars = self._facts(path).stars
        if not stars:
            return None
        for where in self._star_files(path, stars):
            found = self.resolve(where, dotted, hops + 1)
            if found is not None:
                return found
        return None

    def _star_files(self, path: str, stars: tuple[Import, ...]) -> tuple[str, ...]:
        """The files of the scan whose names the file's star imports bind, the last
        first: worked out once a file (networkx's `__init__.py` has some 150, walked
        for every name it is asked for)."""
        found = self._stars.get(path)
        if found is None:
            targets = (self._absolute(path, replace(star, name=None)) for star in reversed(stars))
            where = (self.file_of(target) for target in targets if target)
            found = tuple(w for w in where if w is not None and w != path)
            if len(self._stars) >= _REMEMBERED_BELOW:  # memory stays flat
                self._stars.clear()
            self._stars[path] = found
        return found

    def _absolute(self, path: str, imported: Import) -> str | None:
        module = self._module(path)
        if imported.level == 0:
            base = imported.module
        else:
            package = module if _is_package_init(path) else module.rpartition(".")[0]
            steps = package.split(".") if package else []
            if imported.level - 1 > len(steps):
                return None
            steps = steps[: len(steps) - (imported.level - 1)]
            base = ".".join([*steps, imported.module] if imported.module else steps)
            if not base:
                return imported.name
        return f"{base}.{imported.name}" if imported.name else base

    def _canonical(self, qualified: str, hops: int) -> str | None:
        """Follow re-exports inside the repository to where a class is defined: the
        name as written where the module does not bind it further (an attribute of a
        class defined there: `DeserializationError.WithData`, asked of the module again,
        comes back to this resolution), None where that came back to a resolution under
        way above this one (what it binds is being worked out there)."""
        if self._class_file(qualified) is not None:
            return qualified
        parts = qualified.split(".")
        for cut in range(len(parts) - 1, 0, -1):
            module = ".".join(parts[:cut])
            path = self.file_of(module)
            if path is None:
                continue
            outer, self._low = self._low, _NOWHERE
            found = self.resolve(path, ".".join(parts[cut:]), hops + 1)
            came_back = self._low < len(self._active) - 1  # to one above this one
            self._low = min(outer, self._low)
            if found is None and came_back:
                return None
            return found or qualified
        return stdlib.canonical(qualified) or qualified  # copy.error is copy.Error

    def factory_class(
        self, path: str, ref: str, function: str, hops: int = 0, follow: bool = True
    ) -> str | None:
        """The class a factory in the repository returns or raises, fully qualified;
        with `follow`, through a factory that returns another's (docutils's `def
        error(self, message): return self.directive_error(3, message)`)."""
        found = self._factory_facts(path, ref, function)
        if found is None:
            return None
        made_in, name, facts = found
        made = facts.factories.get(name)
        if not made:
            return None
        if made == "cls":  # a classmethod's `return cls(...)`: the class it is called on
            return self._called_on(path, ref, function, made_in, name)
        resolved = self.resolve(made_in, made)
        if resolved is not None and self._factory_file(resolved) is not None:
            resolved = None  # `Source.parse_error`: another factory of the repository
        if follow and resolved is None and not made.startswith("<") and hops < _MAX_HOPS:
            inner = self.factory_class(made_in, made, name, hops + 1)
            if inner is not None:
                return inner
        return resolved

    def factory_made(self, path: str, ref: str, function: str) -> str | None:
        """What a repository factory returns or raises, as written where it is made."""
        found = self._factory_facts(path, ref, function)
        return found[2].factories.get(found[1]) if found is not None else None

    def factory_call(
        self, path: str, ref: str, function: str
    ) -> tuple[tuple[str, ...], tuple[tuple[str | None, str], ...] | None] | None:
        """A repository factory's parameters and the arguments of the class it builds."""
        found = self._factory_facts(path, ref, function, calls=True)
        return found[2].factory_calls.get(found[1]) if found is not None else None

    def factory_at(
        self, path: str, ref: str, function: str
    ) -> tuple[str, str, str, tuple[str, ...], tuple[tuple[str | None, str], ...] | None] | None:
        """The factory `ref` called in `function` of `path`: the file defining it, its
        qualname there, what it makes as written, its parameters and the arguments of
        what it builds."""
        found = self._factory_facts(path, ref, function, calls=True)
        if found is None:
            return None
        made_in, name, facts = found
        made, call = facts.factories.get(name), facts.factory_calls.get(name)
        if made is None or call is None:
            return None
        return made_in, name, made, call[0], call[1]

    def factory_table(self, path: str, name: str) -> tuple[str, dict[str, str]] | None:
        """The factory `name` of `path`'s table (FileSummary.tables): the parameter it
        looks its class up by, and the class of each key as written in `path`."""
        return self._facts(path).tables.get(name)

    def _factory_facts(
        self, path: str, ref: str, function: str, calls: bool = False
    ) -> tuple[str, str, _FileFacts] | None:
        """The file defining the factory `ref` called in `function` of `path`, its
        qualname there, and that file's facts (`calls`: with the factory's call, where
        the file has it and its summary deferred it)."""
        found = self._factory(path, ref, function)
        if found is None:
            return None
        made_in, name = found
        facts = self._facts(made_in)
        if calls and name in facts.factories and name not in facts.factory_calls:
            facts = self._completed(made_in)
        return made_in, name, facts

    def _factory(self, path: str, ref: str, function: str) -> tuple[str, str] | None:
        """The file defining the factory `ref` called in `function` of `path`, and its
        qualname there; `self.make_error` is looked for in the class and its bases."""
        module = self.module_of(path)
        if module is None:
            return None
        if ref.startswith(("self.", "cls.")):
            owner = function.rsplit(".", 1)[0] if "." in function else None
            if owner is None:
                return None
            return self._method_factory(f"{module}.{owner}", ref.split(".", 1)[1], set())
        qualified = self.resolve(path, ref) or f"{module}.{ref}"
        made_in = self._factory_file(qualified)
        if made_in is None:
            # `Sub.from_error(...)`, a factory method Sub has of a base
            owner, _, method = ref.rpartition(".")
            cls = (
                self.resolve(path, owner)
                if looks_like_class_name(owner.rpartition(".")[2])
                else None
            )
            if cls is None or self.class_info(cls) is None:
                return None
            return self._method_factory(cls, method, set())
        return made_in, qualified[len(self._module(made_in)) + 1 :]

    def _called_on(self, path: str, ref: str, function: str, made_in: str, name: str) -> str | None:
        """The class `cls` is in the factory method `name` of `made_in`, called as `ref` in
        `function` of `path`: the class named before the method (`DeserializationError` of
        Django's `DeserializationError.WithData(...)`, a subclass that inherits it), the
        method's caller's class for `self.`/`cls.`, else the class defining the method.
        None where the factory is no method: `def make(cls, msg)` is handed a class."""
        owner = name.rpartition(".")[0]
        defining = f"{self._module(made_in)}.{owner}" if owner else None
        if defining is None or self.class_info(defining) is None:
            return None
        if ref.startswith(("self.", "cls.")):
            module = self.module_of(path)
            caller = function.rpartition(".")[0]
            called_on = f"{module}.{caller}" if module is not None and caller else None
        else:
            written = ref.rpartition(".")[0]
            called_on = self.resolve(path, written) if written else None
        if called_on is None or self.class_info(called_on) is None:
            return defining
        return called_on

    def _method_factory(self, cls: str, method: str, seen: set[str]) -> tuple[str, str] | None:
        """A factory method of class `cls` or of the first of its bases to define it."""
        if cls in seen or len(seen) > _MAX_HOPS:
            return None
        seen.add(cls)
        made_in = self._factory_file(f"{cls}.{method}")
        if made_in is not None:
            return made_in, f"{cls}.{method}"[len(self._module(made_in)) + 1 :]
        info = self.class_info(cls)
        where = self._file_of_class(cls)
        if info is None or where is None:
            return None
        for base in map(_unsubscripted, info.bases):
            found = self._method_factory(self.resolve(where, base) or base, method, seen)
            if found is not None:
                return found
        return None

    def looked_up(
        self, path: str, function: str, attribute: str, key: str
    ) -> tuple[list[str], bool]:
        """The messages `self.<attribute>[key]` may be in a method `function` of `path`:
        the entry `key` of a class dict whose name is or ends in `_<attribute>`
        (`default_error_messages` for `self.error_messages`), as the method's class has it,
        its own or its nearest base's, then those of its subclasses in the same file that
        set it otherwise; values as the reprs of their literals, empty where none is found.
        With them, whether a caller may set the messages instead: an `__init__` of the
        class or a base sets `self.<attribute>` from its parameters."""
        module = self.module_of(path)
        owner = function.rsplit(".", 1)[0] if "." in function else None
        if module is None or owner is None:
            return [], False
        wanted = (f"{attribute}[{key!r}]", f"_{attribute}[{key!r}]")

        def own(cls: ClassInfo) -> str | None:
            for name, value in cls.constants:
                if name == wanted[0] or name.endswith(wanted[1]):
                    return value
            return None

        found: list[str] = []
        configurable = False
        current: str | None = f"{module}.{owner}"
        seen: set[str] = set()
        while current is not None and current not in seen and len(seen) < _MAX_HOPS:
            seen.add(current)
            cls = self._detailed(current)
            where = self._file_of_class(current)
            if cls is None or where is None:
                break
            configurable = configurable or attribute in cls.caller_set
            value = own(cls)
            if value is not None and not found:
                found.append(value)
            bases = [self.resolve(where, base) or base for base in map(_unsubscripted, cls.bases)]
            current = next((base for base in bases if self.class_info(base) is not None), None)
        if not found:
            return [], configurable
        # subclasses in the file: a base named as written, followed within the file
        classes = self._completed(path).classes
        below = {owner}
        for qualname, cls in classes.items():  # a module's classes come in source order
            if any(_unsubscripted(base) in below for base in cls.bases):
                below.add(qualname)
                configurable = configurable or attribute in cls.caller_set
                value = own(cls)
                if value is not None and value not in found:
                    found.append(value)
        return found, configurable

    def exception_info(self, qualname: str | None) -> ExceptionInfo:
        if qualname is None:
            return ExceptionInfo(None, (), None, None)
        return self._remembered(self._memo, qualname, lambda: self._info(qualname))

    def _info(self, qualname: str) -> ExceptionInfo:
        info = self._detailed(qualname)
        bases: list[str] = []
        init: ClassInfo | None = None
        str_of: ClassInfo | None = None
        plain: ClassInfo | None = None  # the nearest __init__ leaves args as the call gave them
        single = True  # every class on the way has one base (no mixin's __str__ unseen)
        current: str | None = qualname
        seen: set[str] = set()
        constants: dict[str, str] = {}
        composer: ClassInfo | None = None
        composers: list[ClassInfo] = []  # __init__s above init's, each passed the text on
        chained = True  # so far, every class above init read: no __str__, no unread __init__
        unread = False  # an __init__ below the one found, which errscan could not read
        visited: list[ClassInfo] = []  # the repository classes on the primary line
        names: list[str] = []  # their qualnames
        while current is not None and current not in seen and len(bases) < _MAX_HOPS:
            seen.add(current)
            cls = self._detailed(current)
            if cls is None:
                bases.extend(_builtin_ancestors(current) or stdlib.ancestors(current))
                break
            visited.append(cls)
            names.append(current)
            single = single and len(cls.bases) == 1
            parent = self._primary_base(current, cls)
            if parent is None:
                current = None
                break
            bases.append(parent.rsplit(".", 1)[-1])
            current = parent
            if parent.startswith("builtins.") and parent[9:] in _STOP:
                break
        # the classes Python looks __init__, __str__ and constants up in: the primary line,
        # or with several bases somewhere, the method resolution order up to the first
        # class not of the repository (whose own __init__ then decides)
        order, stop = visited, current
        if not single:
            resolution = self._mro_classes(qualname)
            if resolution is not None:
                order, stop, names = resolution
        skipped = {id(c) for c in self._init_skipped(order, names)}
        for cls in order:
            for name, value in cls.constants:
                constants.setdefault(name, value)  # the nearest class's, as Python finds it
            if id(cls) in skipped:  # its __init__ never runs: a base's is called by name
                continue
            unread = unread or (init is None and cls.init_params is None and bool(cls.super_args))
            if (
                init is not None
                and composer is None
                and cls is not init
                and (cls.init_params is not None or cls.plain_args)
            ):
                composer = cls  # a class above the one whose __init__ was found
            if init is not None and cls is not init and chained:
                if cls.from_str or (cls.init_params is None and (cls.super_args or cls.plain_args)):
                    chained = False  # a __str__ or an __init__ not read decides: not composed
                elif cls.init_params is not None:
                    previous = composers[-1] if composers else init
                    if previous.super_args:
                        composers.append(cls)
                    else:
                        chained = False
            if init is None and cls.init_params is not None and (plain is None or cls.from_str):
                init = cls
            elif init is None and plain is None and cls.plain_args:
                plain = cls
            elif init is not None and str_of is None and cls.from_str and not init.from_str:
                str_of = cls if init.super_args else None
        # str() of the call's positional arguments: no __str__ on the way up, and a builtin
        # base whose str() is BaseException's
        # (an __init__ that keeps them, or none at all, before the builtin: one not read
        # leaves it unknown)
        args_str = (
            init is None and (plain is not None or not unread)
            and stop is not None and stop.removeprefix("builtins.") in _PLAIN_STR
            and stop.startswith("builtins.")
        )  # fmt: skip
        doc = info.doc if info else None
        if init is not None and not init.init_parts and composer is not None:
            # super().__init__() into a base that composes a text of its own: not read
            init = replace(init, init_parts=(MessagePart(expr=UNKNOWN_STR),), init_candidates=())
        if init is not None and unread and init.init_defaults:
            # what the call leaves out is not what reaches the base's __init__: no default
            init = replace(init, init_defaults=())
        found = tuple(sorted(constants.items()))
        init_from_str = init is not None and init.from_str
        # init's own __str__ decides the text, whatever its bases' __init__s make
        chain = tuple(composers) if chained and str_of is None and not init_from_str else ()
        last = chain[-1] if chain else init  # the __init__ that passes on to the builtin
        given = last.super_args if last is not None else ()  # what `last` passes on
        passed = [text for keyword, text in given if keyword is None]
        # what `last` passes on reaches the builtin as it is: no __str__ on the way
        to_builtin = (
            last is not None and not last.from_str and str_of is None and chained
            and (bool(chain) or composer is None)
        )  # fmt: skip
        args_of_init = (
            to_builtin
            and len(passed) > 1 and len(passed) == len(given)
            and stop is not None and stop.startswith("builtins.")
            and stop.removeprefix("builtins.") in _PLAIN_STR
        )  # fmt: skip
        caller_set = frozenset(name for cls in order for name in cls.caller_set)
        builtin_base = (
            stop.removeprefix("builtins.")
            if init is None and plain is None and not unread and str_of is None
            and stop is not None and stop.startswith("builtins.")
            else None
        )  # fmt: skip
        if init is not None and str_of is None and stop in _UNICODE_STR:
            # UnicodeEncodeError's __str__ reads the fields only its own __init__ sets
            # (pyasn1's PyAsn1UnicodeEncodeError calls UnicodeError's and its base's:
            # str() is ""): what an __init__ composes is not the text
            init = replace(init, init_parts=(MessagePart(expr=UNKNOWN_STR),), init_candidates=())
        key_quoted = to_builtin and len(passed) == 1 == len(given) and stop == "builtins.KeyError"
        runs: list[ClassInfo] = []
        for cls in order:  # up to the nearest __str__, where it is such a one
            if id(cls) not in skipped:
                runs.append(cls)
            if cls.from_str:
                if not any(_attrs_formatted(part) for part in cls.init_parts):
                    runs = []
                break
        else:
            runs = []
        return ExceptionInfo(
            qualname, tuple(bases), doc, init, str_of, chain, args_of_init,
            init is None and unread, args_str, found, caller_set, builtin_base, key_quoted,
            init is not None and unread, tuple(runs),
        )  # fmt: skip

    def _init_skipped(self, order: list[ClassInfo], names: list[str]) -> list[ClassInfo]:
        """The classes of `order` whose __init__ never runs, where one below calls a
        base's by name past them (`ValidateError.__init__(self, text)` in a subclass of
        VdtValueError): those up to the base named, or all above where it is not a class
        of the order (Exception's); none where that holds a __str__, which still decides."""
        for number, cls in enumerate(order):
            if cls.init_of is None:
                continue
            path = self._file_of_class(names[number])
            target = (self.resolve(path, cls.init_of) if path else None) or cls.init_of
            above = names[number + 1 :]
            cut = above.index(target) if target in above else len(above)
            between = order[number + 1 : number + 1 + cut]
            if any(c.from_str or c.deferred for c in between):
                return []
            return between + self._init_skipped(order[number + 1 + cut :], above[cut:])
        return []

    def _mro_classes(self, qualname: str) -> tuple[list[ClassInfo], str | None, list[str]] | None:
        """The repository classes of `qualname`'s method resolution order (C3, as Python
        makes it) up to the first class that is not one, that class (None where there is
        none), and the qualnames of the classes; None where no order can be made."""
        found = self._mro(qualname, 0)
        if found is None:
            return None
        out: list[ClassInfo] = []
        for number, name in enumerate(found):
            cls = self._detailed(name)
            if cls is None:
                return out, name, found[:number]
            out.append(cls)
        return out, None, found

    def _mro(self, qualname: str, depth: int) -> list[str] | None:
        cls = self.class_info(qualname)
        if cls is None:  # a builtin's or standard class's own line; else itself only
            return stdlib.mro(qualname) or [
                qualname,
                *(f"builtins.{n}" for n in _builtin_ancestors(qualname)),
            ]
        if depth > _MAX_HOPS:
            return None
        path = self._file_of_class(qualname)
        resolved = [(self.resolve(path, base) if path else None) or base
                    for base in map(_unsubscripted, cls.bases)]  # fmt: skip
        resolved = [base for base in resolved if base != qualname]
        lines = [self._mro(base, depth + 1) for base in resolved]
        if any(line is None for line in lines):
            return None
        merged = _c3([line for line in lines if line is not None] + [resolved])
        return None if merged is None else [qualname, *merged]

    def _primary_base(self, qualname: str, cls: ClassInfo) -> str | None:
        """The base that leads to an exception class: the first such, else the first base."""
        path = self._file_of_class(qualname)
        bases = map(_unsubscripted, cls.bases)
        resolved = [(self.resolve(path, base) if path else None) or base for base in bases]
        for candidate in resolved:
            if self._is_exception(candidate, set()):
                return candidate
        return resolved[0] if resolved else None

    def is_exception(self, qualname: str) -> bool:
        """Whether `qualname` is a builtin exception or a repository class deriving one."""
        return self._is_exception(qualname, set())

    def _is_exception(self, qualname: str, seen: set[str]) -> bool:
        if qualname.startswith("builtins."):
            return qualname[9:] in BUILTIN_EXCEPTIONS
        cls = self.class_info(qualname)
        if cls is None or qualname in seen or len(seen) > _MAX_HOPS:
            return False
        seen.add(qualname)
        path = self._file_of_class(qualname)
        return (
            any(
                self._is_exception(self.resolve(path, base) or base, seen)
                for base in map(_unsubscripted, cls.bases)
            )
            if path
            else False
        )

    def _module(self, path: str) -> str:
        module = self.module_of(path)
        if module is None:
            raise KeyError(path)
        return module

    def _file_of_class(self, qualname: str) -> str | None:
        parts = qualname.split(".")
        for cut in range(len(parts) - 1, 0, -1):
            path = self.file_of(".".join(parts[:cut]))
            if path is not None:
                return path
        return None


# what a class's __init__ passes on, where it could not be read: a text not known
_UNREAD_INIT = ((None, UNKNOWN_STR),)


def _unsubscripted(base: str) -> str:
    """A base class as written, without its type arguments: `Field[list[T]]` -> `Field`."""
    return base.split("[", 1)[0].strip()


def claims(path: str, held: str) -> bool:
    """Whether `path` defines a name rather than `held`, both defining it: a module over
    its stub (.pyi), else the first path."""
    stub, held_stub = path.endswith(".pyi"), held.endswith(".pyi")
    return (held_stub and not stub) or (held_stub == stub and path < held)


def _is_package_init(path: str) -> bool:
    return path.rsplit("/", 1)[-1] in ("__init__.py", "__init__.pyi")


def _c3(lines: list[list[str]]) -> list[str] | None:
    """C3's merge of the bases' lines and the bases; None where no order keeps them all."""
    pending = [list(line) for line in lines if line]
    out: list[str] = []
    while pending:
        head = next(
            (line[0] for line in pending if not any(line[0] in other[1:] for other in pending)),
            None,
        )
        if head is None:
            return None
        out.append(head)
        pending = [line[1:] if line[0] == head else line for line in pending]
        pending = [line for line in pending if line]
    return out


def _attrs_formatted(part: MessagePart) -> bool:
    return part.expr is not None and part.expr.startswith(ATTRS_FORMAT)


def _builtin_ancestors(qualname: str) -> list[str]:
    """ValueError -> [Exception]; KeyError -> [LookupError, Exception]."""
    name = qualname.removeprefix("builtins.")
    classes = BUILTIN_EXCEPTIONS.get(name, ()) if qualname.startswith("builtins.") else ()
    out = []
    for ancestor in classes[1:]:
        out.append(ancestor)
        if ancestor in _STOP:
            break
    return out
