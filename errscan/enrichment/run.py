"""Enrich records: plan what needs a model's prose, ask N at a time, store each answer.

jobs, skipped = plan(records, store, model)      # what has no enrichment for its facts
summary = run(jobs, endpoint, store, concurrency=4, progress=print)

Each answer is stored as it arrives, one transaction each, by the main thread (SQLite's
one writer); a Ctrl-C stops taking new work and returns what was done, so the next run
resumes with the rest.
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from errscan.analyzer.store import Store, StoredEnrichment
from errscan.enrichment import client
from errscan.enrichment.facts import PROMPT_VERSION, answer_of, digest, facts, messages, problems
from errscan.enrichment.facts import schema as answer_schema
from errscan.frozen import frozen
from errscan.models import ErrorRecord


@frozen
class Job:
    record: ErrorRecord
    facts: dict[str, Any]
    digest: str


@dataclass
class Summary:
    total: int = 0  # jobs to do
    done: int = 0
    failed: int = 0
    skipped: int = 0  # already enriched for their facts
    tokens_in: int = 0
    tokens_out: int = 0
    requests: int = 0
    started: float = field(default_factory=time.monotonic)
    interrupted: bool = False
    failures: list[tuple[str, str]] = field(default_factory=list)  # (record id, reason)

    @property
    def eta(self) -> float | None:
        finished = self.done + self.failed
        if not finished:
            return None
        return (time.monotonic() - self.started) / finished * (self.total - finished)


def plan(
    records: Sequence[ErrorRecord], store: Store, model: str, force: bool = False
) -> tuple[list[Job], int]:
    """The records whose facts have no enrichment by `model` and this prompt (all of
    them with `force`), each once; and how many were skipped."""
    by_id = {record.id: record for record in records}
    jobs: list[Job] = []
    seen: set[tuple[str, str]] = set()
    skipped = 0
    for record in records:
        found = facts(record, by_id.get)
        key = (record.id, digest(found))
        if key in seen:
            continue
        seen.add(key)
        if not force and store.enrichment(*key, model=model, prompt=PROMPT_VERSION):
            skipped += 1
            continue
        jobs.append(Job(record, found, key[1]))
    return jobs, skipped


@dataclass
class _Outcome:
    job: Job
    answer: dict[str, Any] | None
    reason: str | None
    tokens_in: int = 0
    tokens_out: int = 0
    requests: int = 0


class _Asker:
    """Asks for one job's answer: JSON Schema output where the server takes it (a 400
    to it once turns it off for the run), instructions alone where not; an answer that
    does not fit the schema is asked for once more."""

    def __init__(self, endpoint: client.Endpoint, sleep: Callable[[float], None]) -> None:
        self.endpoint = endpoint
        self.sleep = sleep
        self.structured = True

    def ask(self, job: Job) -> _Outcome:
        outcome = _Outcome(job, None, None)
        chat = messages(job.facts)
        for _ in range(2):  # the answer, and one more try where it does not fit
            try:
                reply = self._complete(chat, outcome)
            except client.Failed as failed:
                outcome.requests += failed.requests
                outcome.reason = str(failed)
                return outcome
            outcome.tokens_in += reply.tokens_in
            outcome.tokens_out += reply.tokens_out
            answer = answer_of(reply.content)
            wrong = ["not a JSON object"] if answer is None else problems(answer)
            if not wrong:
                outcome.answer = answer
                outcome.reason = None
                return outcome
            outcome.reason = "the answer does not fit the schema: " + "; ".join(wrong[:3])
        return outcome

    def _complete(self, chat: list[dict[str, str]], outcome: _Outcome) -> client.Reply:
        while True:
            structured = self.structured
            try:
                reply, requests = client.complete(
                    self.endpoint, chat, answer_schema() if structured else None, self.sleep
                )
            except client.Unsupported:
                if not structured:
                    raise
                outcome.requests += 1
                self.structured = False  # the server does not take response_format
                continue
            outcome.requests += requests
            return reply


def run(
    jobs: Sequence[Job],
    endpoint: client.Endpoint,
    store: Store,
    concurrency: int = 4,
    progress: Callable[[Summary], None] | None = None,
    summary: Summary | None = None,
    sleep: Callable[[float], None] = time.sleep,
) -> Summary:
    summary = summary if summary is not None else Summary()
    summary.total = len(jobs)
    todo: queue.Queue[Job] = queue.Queue()
    for job in jobs:
        todo.put(job)
    done: queue.Queue[_Outcome] = queue.Queue()
    stop = threading.Event()
    asker = _Asker(endpoint, sleep)

    def work() -> None:
        while not stop.is_set():
            try:
                job = todo.get_nowait()
            except queue.Empty:
                return
            try:
                done.put(asker.ask(job))
            except Exception as error:  # a bug must not hang the run: it is a failure
                done.put(_Outcome(job, None, f"internal error: {type(error).__name__}"))

    # daemon threads: a Ctrl-C leaves a request in flight behind rather than wait for it
    workers = [threading.Thread(target=work, daemon=True) for _ in range(max(1, concurrency))]
    for worker in workers:
        worker.start()
    try:
        for _ in range(len(jobs)):
            outcome = _next(done)
            _store(outcome, endpoint.model, store, summary)
            if progress is not None:
                progress(summary)
    except KeyboardInterrupt:
        stop.set()
        summary.interrupted = True
    return summary


def _next(done: queue.Queue[_Outcome]) -> _Outcome:
    while True:  # a short wait at a time, so that a Ctrl-C is taken at once
        try:
            return done.get(timeout=0.2)
        except queue.Empty:
            continue


def _store(outcome: _Outcome, model: str, store: Store, summary: Summary) -> None:
    job = outcome.job
    summary.tokens_in += outcome.tokens_in
    summary.tokens_out += outcome.tokens_out
    summary.requests += outcome.requests
    if outcome.answer is not None:
        kept = StoredEnrichment(
            job.record.id, job.digest, model, PROMPT_VERSION, outcome.answer,
            outcome.tokens_in, outcome.tokens_out, time.time(),
        )  # fmt: skip
        store.save_enrichment(kept)
        summary.done += 1
        return
    reason = outcome.reason or "no answer"
    store.save_enrichment_failure(job.record.id, job.digest, model, PROMPT_VERSION, reason)
    summary.failed += 1
    summary.failures.append((job.record.id, reason))
