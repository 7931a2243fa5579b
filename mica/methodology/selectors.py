from mica.methodology.models import Edition, EditionStatus


def edition_current():
    """The edition the public reads: the newest published, else the newest draft."""
    editions = Edition.objects.order_by("-published_on", "-pk")
    return (
        editions.filter(status=EditionStatus.PUBLISHED).first()
        or editions.filter(status=EditionStatus.DRAFT).first()
    )
