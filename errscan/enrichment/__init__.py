"""Prose for records (What it means, Solutions, Common situations) by any
OpenAI-compatible model, kept in the store apart from the records, one per version of an
error's facts."""

from errscan.enrichment.client import Endpoint, Failed
from errscan.enrichment.facts import PROMPT_VERSION, digest, facts, messages, problems, schema
from errscan.enrichment.run import Job, Summary, plan, run

__all__ = [
    "PROMPT_VERSION",
    "Endpoint",
    "Failed",
    "Job",
    "Summary",
    "digest",
    "facts",
    "messages",
    "plan",
    "problems",
    "run",
    "schema",
]
