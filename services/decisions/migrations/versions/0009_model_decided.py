"""The index a listing by model reads, and the one the filters' model list skips through.

No index led with the model, so "this model's newest decisions" walked the
decision-time index and dropped every other model's rows: for a model that
made few of a million decisions, the whole table. With the model leading,
one model's page is a range of its own entries, and the distinct models are
found by one probe each (ListDecisionFacets, and the models a substring
search resolves to). Decisions without a model are left out: no query asks
for them by model.
"""

from services.common.migrations import execute_script

revision = "decisions_0009"
down_revision = "decisions_0008"
branch_labels = None
depends_on = None


def upgrade() -> None:
    execute_script(
        """
        create index decisions_model_decided on decisions (model, decided_at desc, id desc) where model is not null;
        """
    )
