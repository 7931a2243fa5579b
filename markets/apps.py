from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class MarketsConfig(AppConfig):
    name = "markets"
    verbose_name = _("Markets")

    def ready(self):
        # Imported once the app registry is ready, as models must be.
        from markets import checks  # noqa: F401  (registers the coverage check)
        from markets.edition_diff import market_edition_records
        from markets.frozen import GUARD, frozen_market_editions_connect
        from markets.selectors import market_editions_frozen, market_figures
        from markets.services import market_editions_follow_draft
        from mica.frozen_rows import frozen_rows_register
        from mica.methodology import extensions

        # A published edition's market editions are frozen with it (markets.frozen).
        frozen_market_editions_connect()
        frozen_rows_register(GUARD)

        extensions.live_figures_register(market_figures)
        extensions.frozen_count_register(market_editions_frozen)
        extensions.edition_records_register("market_editions", market_edition_records)
        extensions.edition_drafted.connect(
            market_editions_follow_draft, dispatch_uid="market-editions-follow-draft"
        )
