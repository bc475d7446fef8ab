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
    # the app's long poll waits up to 20 s for a command by default: the fuzzer asks for no wait
    operation = getattr(ctx, "operation", None)
    if operation is not None and operation.path.endswith("/view/commands") and isinstance(query, dict):
        query["wait"] = "0"
    return query
