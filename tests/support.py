"""Helpers the test modules share (fixtures live in the conftest files)."""

import os

import pytest

IN_CI = os.environ.get("CI", "").lower() in {"1", "true", "yes"}


def require(condition, reason):
    """Skip (locally) or fail (in CI) when a real component is missing."""
    if condition:
        return
    if IN_CI:
        pytest.fail(f"CI needs this component: {reason}", pytrace=False)
    pytest.skip(reason)


def fields_missing_korean(app_label):
    """Every translated field of an app's records that has English but no Korean."""
    from modeltranslation.translator import translator

    missing = []
    for model in translator.get_registered_models():
        if model._meta.app_label != app_label:
            continue
        fields = translator.get_options_for_model(model).fields
        for record in model.objects.all():
            for name in fields:
                if getattr(record, f"{name}_en") and not getattr(record, f"{name}_ko"):
                    missing.append(f"{model.__name__}#{record.pk}.{name}")
    return missing
