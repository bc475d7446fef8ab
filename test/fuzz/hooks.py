"""Schemathesis hooks for Arbor's fuzz run (test/fuzz/run.sh).

Most generated requests name a random projectId and would stop at the access check (403).
These hooks point most of them at the project the script created, so the fuzzer reaches
the handlers and their validation; the rest keep the generated value.
"""
import os
import random

import schemathesis

PROJECT = os.environ["ARBOR_FUZZ_PROJECT"]


def _aim(container):
    if isinstance(container, dict) and "projectId" in container and random.random() < 0.85:
        container["projectId"] = PROJECT
    return container


@schemathesis.hook
def map_body(ctx, body):
    _aim(body)
    if isinstance(body, dict) and isinstance(body.get("mutations"), list):
        for entry in body["mutations"]:
            if isinstance(entry, dict):
                entry.pop("projectId", None)
    return body


@schemathesis.hook
def map_query(ctx, query):
    query = _aim(query)
    # the long polls (the app's /view/commands, 20 s by default, and /events, up to 60 s) would
    # hold a request past the fuzzer's 30 s read timeout: a valid wait is cut to at most 1 s, an
    # invalid one is kept so its 400 is still checked
    operation = getattr(ctx, "operation", None)
    if operation is None or not isinstance(query, dict):
        return query
    if operation.path.endswith("/view/commands") and "wait" not in query:
        query["wait"] = "0"
    if "wait" in query:
        query["wait"] = _short_wait(query["wait"])
    return query


def _short_wait(value):
    try:
        seconds = float(value)
    except (TypeError, ValueError):
        return value
    if seconds != seconds or seconds < 0 or seconds > 60:
        return value
    return "1" if seconds >= 1 else value


@schemathesis.hook
def before_call(ctx, case, kwargs):
    # the coverage phase sends the documented bounds of wait (/events up to 60 s) without passing
    # through map_query: the same cut applies here, at the call every phase makes
    query = case.query
    if not isinstance(query, dict):
        return
    if case.operation.path.endswith("/view/commands"):
        query.setdefault("wait", "0")
        try:
            if 1000 < float(query["wait"]) <= 15000:
                query["wait"] = "1000"
        except (TypeError, ValueError):
            pass
    elif "wait" in query:
        query["wait"] = _short_wait(query["wait"])
