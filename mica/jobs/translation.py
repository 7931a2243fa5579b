from modeltranslation.translator import TranslationOptions, register

from mica.jobs.models import JobRun


@register(JobRun)
class JobRunTranslation(TranslationOptions):
    # A run's message is written once, in every language (mica.jobs.workflows), so a
    # Korean admin reads the progress of a job a worker reported in English.
    fields = ("message",)
