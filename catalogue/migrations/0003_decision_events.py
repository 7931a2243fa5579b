import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):
    """Review events take the shape every decision event has (mica.workflows.DecisionEvent)."""

    dependencies = [("catalogue", "0002_history")]

    operations = [
        migrations.RenameField("reviewevent", "actor_role", "role"),
        migrations.RenameField("reviewevent", "comment", "reason"),
        migrations.AlterField(
            model_name="reviewevent",
            name="actor",
            field=models.ForeignKey(
                blank=True,
                null=True,
                on_delete=django.db.models.deletion.PROTECT,
                related_name="+",
                to=settings.AUTH_USER_MODEL,
                verbose_name="decided by",
            ),
        ),
        migrations.AlterField(
            model_name="reviewevent",
            name="reason",
            field=models.TextField(blank=True, verbose_name="reason"),
        ),
        migrations.AlterField(
            model_name="reviewevent",
            name="role",
            field=models.CharField(max_length=20, verbose_name="deciding role"),
        ),
    ]
