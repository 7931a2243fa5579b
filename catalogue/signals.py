"""What the catalogue tells the floors above it, which connect in their AppConfig.ready."""

from django.dispatch import Signal

# Sent inside the transaction that moved a local review, with `review` (in its new
# state) and `event` (the ReviewEvent just written): a receiver that writes rows (an
# outbox message, say) commits or rolls back with the move itself.
review_moved = Signal()
