from rest_framework.pagination import LimitOffsetPagination


class Pagination(LimitOffsetPagination):
    """limit/offset pages with bounds, so no query string reaches the database unchecked."""

    default_limit = 50
    max_limit = 200
    max_offset = 10_000_000

    def get_offset(self, request):
        return min(super().get_offset(request), self.max_offset)
