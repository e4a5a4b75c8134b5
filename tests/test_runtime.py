"""Templates against the real thing: run each fixture case, and match its record's template.

Executes fixtures/repos/messages (errscan's own fixture, never a scanned repository):
every `case_*` function raises, exits or warns once. Its record, found by the line the
traceback names, must have that line, and its template, used as a pattern (literal parts
exact, each placeholder any text), must match str(exc) in full.
"""

from __future__ import annotations

import contextlib
import importlib
import inspect
import io
import re
import shutil
import sys
import traceback
import warnings
from collections import Counter
from collections.abc import Iterator, Sequence
from pathlib import Path
from types import ModuleType

import pytest

import errscan
from tests.support import FIXTURES, build_repo, candidate_pattern


def pattern(record: errscan.ErrorRecord) -> re.Pattern[str]:
    pieces = [re.escape(p.text) if p.text is not None else ".*?" for p in record.message_parts]
    return re.compile("".join(pieces), re.DOTALL)


def matches(record: errscan.ErrorRecord, text: str) -> bool:
    if record.message is None:
        return False
    return pattern(record).fullmatch(text) is not None


@pytest.fixture
def fixture_package(tmp_path: Path) -> Iterator[ModuleType]:
    root = tmp_path / "importable"
    shutil.copytree(FIXTURES / "messages", root)
    sys.path.insert(0, str(root))
    try:
        yield importlib.import_module("msgs.cases")
    finally:
        sys.path.remove(str(root))
        for name in [n for n in sys.modules if n == "msgs" or n.startswith("msgs.")]:
            del sys.modules[name]


# cases raising what only a newer Python has: its builtins, by the first version
_NEWER = {"case_exception_group": (3, 11)}


def _runs_here(name: str) -> bool:
    """A fixture case this interpreter can run."""
    return name.startswith("case_") and sys.version_info >= _NEWER.get(name, (3, 0))


def trigger(function: object, root: str) -> tuple[BaseException, list[tuple[str, int]], str]:
    """Call a case; the exception it throws, the fixture frames it passed (file, line),
    the innermost first, and the text its user sees: str(exc), but for an exit with a
    status, the last line it printed on stderr (argparse's `tool: error: ...`)."""
    printed = io.StringIO()
    with warnings.catch_warnings(), contextlib.redirect_stderr(printed):
        warnings.simplefilter("error")
        try:
            function()  # type: ignore[operator]
        except BaseException as exc:
            frames = [f for f in traceback.extract_tb(exc.__traceback__) if root in f.filename]
            places = [(f.filename.split(root, 1)[1].lstrip("/"), f.lineno or 0) for f in frames]
            text = str(exc)
            if isinstance(exc, SystemExit) and not isinstance(exc.code, str):
                text = printed.getvalue().rstrip("\n").rpartition("\n")[2]
            return exc, places[::-1], text
    raise AssertionError(f"{function} did not raise")


def record_of(
    records: Sequence[errscan.ErrorRecord],
    name: str,
    text: str,
    frames: list[tuple[str, int]],
) -> errscan.ErrorRecord:
    """The record of the site that raised: of those the frames name, the one whose
    template is the message with the most literal text (`self.fail(f"...")` rather than
    `raise exc(msg)` in fail), else the innermost; a re-raise keeps the traceback of
    where the error began."""
    named = [
        r
        for path, line in frames
        for r in records
        if r.file == path and r.line <= line <= r.end_line
    ]
    matched = [r for r in named if matches(r, text)]
    if matched:  # the most specific: `invalid size: {value!r}` over `invalid {kind}: ...`
        return max(matched, key=lambda r: sum(len(p.text or "") for p in r.message_parts))
    if not named:
        named = [r for r in records if r.function == name and r.kind == "reraise"]
    assert named, f"{name}: no record at {frames}"
    return named[0]


def test_templates_match_runtime_messages(
    fixture_package: ModuleType, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = build_repo(tmp_path / "repo", "messages")
    records = errscan.extract(str(repo)).records
    root = str(Path(fixture_package.__file__ or "").parent.parent)
    cases = sorted(
        (obj for name, obj in vars(fixture_package).items() if _runs_here(name)),
        key=lambda f: f.__code__.co_firstlineno,
    )
    per_form: Counter[tuple[str, str]] = Counter()
    failures = []
    unresolved = []
    for case in cases:
        exc, frames, text = trigger(case, root)
        record = record_of(records, case.__name__, text, frames)
        if record.kind != "reraise":
            # the class too, message or not; OSError(ENOENT, ...) comes out a
            # FileNotFoundError: a subclass is a match
            names = {cls.__name__ for cls in type(exc).__mro__}
            qualname = record.exception_qualname or ""
            assert qualname.rsplit(".", 1)[-1] in names, (case.__name__, qualname)
        if record.message_source == "none":  # no text, it says: the empty one
            per_form[("none", "match" if text == "" else "MISMATCH")] += 1
            if text != "":
                failures.append(f"{case.__name__}: no text vs {text!r}")
            continue
        if record.message is None:
            unresolved.append(case.__name__)
            per_form[(record.message_source, "unresolved")] += 1
            continue
        ok = matches(record, text) or any(
            candidate_pattern(c).fullmatch(text) for c in record.message_candidates
        )
        if case.__name__.endswith("_set_by_the_user"):
            # the code's default, which the user replaced: said so, and not this text
            assert record.message_source == "default" and not ok, case.__name__
            per_form[(record.message_source, "replaced")] += 1
            continue
        per_form[(record.message_source, "match" if ok else "MISMATCH")] += 1
        if not ok:
            failures.append(f"{case.__name__}: {record.message!r} vs {text!r}")
    resolved = sum(n for (_, o), n in per_form.items() if o not in ("unresolved", "replaced"))
    matched = sum(n for (_, outcome), n in per_form.items() if outcome == "match")
    with capsys.disabled():
        print(f"\nruntime check of {len(cases)} fixture sites (message_source: outcome = count)")
        for (form, outcome), count in sorted(per_form.items()):
            print(f"  {form:<11} {outcome:<10} {count}")
        print(f"  matched {matched}/{resolved} resolved templates ({matched / resolved:.1%}); "
              f"unresolved by design: {', '.join(unresolved)}")  # fmt: skip
    assert not failures  # every template read must match what its site really raises
    assert unresolved == [
        "case_reraise", "case_unresolved_call", "case_unresolved_parameter",
        "case_str_formatting_a_format_string_made_at_the_call",
        "case_unicode_error_whose_init_is_not_its_own", "case_class_made_by_its_own_classmethod",
        "case_object_whose_class_is_set_before_it_is_raised",
        "case_exception_kept_then_raised_with_its_traceback",
        "case_factory_giving_back_the_exception_being_handled",
        "case_class_with_a_standard_base_whose_str_is_its_repr",
        "case_exception_of_an_exc_info_triple", "case_name_an_if_checks_the_class_of",
        "case_init_passing_on_only_the_arguments_after_its_own",
        "case_base_str_formatting_the_arguments_passed_on_as_they_came",
        "case_init_passing_several_arguments_to_a_str_not_read",
        "case_factory_called_without_arguments_giving_a_text_of_its_own",
        "case_str_not_read_reading_a_private_attribute_the_call_sets",
        "case_str_not_read_given_keywords_by_a_mapping",
        "case_str_not_read_reading_what_an_init_not_read_sets",
        "case_text_formatted_with_an_attribute_a_base_sets_again",
        "case_text_formatted_by_a_str_of_its_own",
        "case_text_formatted_with_an_attribute_set_in_an_if",
        "case_str_is_the_repr_of_a_local_of_its_own", "case_str_pads_the_text",
        "case_str_is_the_second_argument_made_anew_before_it_is_passed_on",
        "case_str_adds_the_wrapped_exception_where_given_to_a_text_not_read",
        "case_init_default_not_used_where_a_mapping_gives_the_message",
    ]  # fmt: skip


def test_cases_cover_every_message_form(fixture_package: ModuleType, tmp_path: Path) -> None:
    repo = build_repo(tmp_path / "repo", "messages")
    sources = {r.message_source for r in errscan.extract(str(repo)).records}
    expected = {
        "literal", "fstring", "percent", "format", "concat", "variable", "constant",
        "factory", "init", "default", "unresolved",
    }  # fmt: skip
    assert expected <= sources
    assert inspect.ismodule(fixture_package)


REQUIRED_LOOKUP_SHARE = 0.98


def test_lookup_finds_the_record_behind_runtime_errors(
    fixture_package: ModuleType, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = build_repo(tmp_path / "repo", "messages")
    # a fixed name, so ids (ties' order between identical templates) are the same each run
    records = list(errscan.extract(str(repo), repo_name="errscan-fixtures/messages").records)
    root = str(Path(fixture_package.__file__ or "").parent.parent)
    cases = [obj for name, obj in sorted(vars(fixture_package).items()) if _runs_here(name)]
    tries: Counter[str] = Counter()
    hits: Counter[str] = Counter()
    misses = []
    for case in cases:
        exc, frames, text = trigger(case, root)
        record = record_of(records, case.__name__, text, frames)
        shown = "".join(traceback.format_exception(exc))
        inputs = {"traceback": shown}
        # a text the user set in place of the code's default: only its traceback says where
        if record.message is not None and not case.__name__.endswith("_set_by_the_user"):
            if text:  # an empty message is nothing to paste alone
                inputs["message"] = text
            inputs["typed"] = f"{type(exc).__name__}: {text}"
        for form, text in inputs.items():
            tries[form] += 1
            best = errscan.lookup(text, records)
            if best and best[0].record.id == record.id:
                hits[form] += 1
            else:
                misses.append(f"{case.__name__} ({form})")
    share = sum(hits.values()) / sum(tries.values())
    with capsys.disabled():
        print("\nlookup of runtime errors: right record first")
        for form in sorted(tries):
            print(f"  {form:<10} {hits[form]}/{tries[form]}")
        print(f"  all        {sum(hits.values())}/{sum(tries.values())} ({share:.1%})")
    assert share >= REQUIRED_LOOKUP_SHARE, misses
