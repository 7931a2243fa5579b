"""What submissions announce to the results floor above, inside the transaction that
wrote it, so that what is derived from a record commits with it or not at all."""

from django.dispatch import Signal

# `cells=[(snapshot_id, market_id, family_id), …]`: the cells that received new attempts.
# Governance recomputes them (the gate), so stored attempts and their figures agree.
attempts_recorded = Signal()

# `challenge=…, text_en=…, text_ko=…`: an accepted challenge and its correction's text.
# Governance records the correction, shown wherever the corrected claim is shown.
challenge_accepted = Signal()
