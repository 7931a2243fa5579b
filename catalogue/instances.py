"""Parameterized instances: one definition, many checkable concrete cases.

Pure and deterministic: the same task version, market, seed and count always
give the same instances, on any machine (random.Random seeded with a string
hashes it with SHA-512, independent of PYTHONHASHSEED).
"""

import random

MAX_INSTANCES = 50


def _value(rng, parameter, market):
    kind = parameter["type"]
    if kind in ("integer", "date-offset-days"):
        return rng.randint(parameter["min"], parameter["max"])
    if kind == "money":
        return {
            "amount": rng.randint(parameter["min"], parameter["max"]),
            "currency": market["currency_code"],
        }
    if kind in ("choice", "text"):
        return rng.choice(parameter["choices"])
    raise ValueError(f"unknown parameter type {kind!r}")


def generate_instances(parameters, *, task_id, version, market, seed, n):
    """`n` instances of a task version for a market (a dict with code and currency_code)."""
    if not 1 <= n <= MAX_INSTANCES:
        raise ValueError(f"n must be between 1 and {MAX_INSTANCES}")
    rng = random.Random(f"{task_id}|{version}|{market['code']}|{seed}")
    return [
        {
            "instance_id": f"{task_id}@{version}:{market['code']}:{seed}:{index + 1}",
            "task_id": task_id,
            "version": version,
            "market": market["code"],
            "parameters": {p["name"]: _value(rng, p, market) for p in parameters},
        }
        for index in range(n)
    ]
