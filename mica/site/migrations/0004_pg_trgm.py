"""pg_trgm, which the site search uses to rank Korean hits (mica/site/search.py).

TrigramExtension does nothing on any database but PostgreSQL (Django checks the
vendor), so the embedded SQLite default migrates as before.
"""

from django.contrib.postgres.operations import TrigramExtension
from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [("site", "0003_content_models_move_to_the_kernel")]

    operations = [TrigramExtension()]
