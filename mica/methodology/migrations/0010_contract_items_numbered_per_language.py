"""A contract section numbers its items per language: seed 001 numbers the items of
5.1, 6.1 and 8.4, which seed 000 gives by their terms. The one flag becomes two, each
section (and each of its recorded revisions) keeping what it said, and those three
sections are numbered in Korean as the owner's Korean page numbers them."""

from django.db import migrations, models

# The sections seed 001 numbers and seed 000 does not.
NUMBERED_IN_KOREAN = ("locality-policy", "platform-policy", "value-policy")
MODELS = ("ContractSection", "HistoricalContractSection")


def split_the_flag(apps, schema_editor):
    for name in MODELS:
        model = apps.get_model("methodology", name)
        model.objects.filter(numbered=True).update(numbered_en=True, numbered_ko=True)
    sections = apps.get_model("methodology", "ContractSection")
    sections.objects.filter(section_id__in=NUMBERED_IN_KOREAN).update(numbered_ko=True)


def join_the_flag(apps, schema_editor):
    for name in MODELS:
        model = apps.get_model("methodology", name)
        model.objects.filter(numbered_en=True).update(numbered=True)


def flag(label):
    return models.BooleanField(default=False, verbose_name=label)


class Migration(migrations.Migration):
    dependencies = [
        ("methodology", "0009_edition_thresholds_help_and_units"),
    ]

    operations = [
        *(
            migrations.AddField(
                model_name=model.lower(),
                name=f"numbered_{lang}",
                field=flag(f"items numbered in {language}"),
            )
            for model in MODELS
            for lang, language in (("en", "English"), ("ko", "Korean"))
        ),
        migrations.RunPython(split_the_flag, join_the_flag),
        *(migrations.RemoveField(model_name=model.lower(), name="numbered") for model in MODELS),
    ]
