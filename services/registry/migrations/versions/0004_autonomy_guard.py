"""The opt-in autonomy guard (DESIGN §10): an agent whose operator turned it on
may have its autonomy switched off by the platform when its evidence says
demote. Off by default, so no agent loses autonomy it was given before.
"""

from services.common.migrations import execute_script

revision = "registry_0004"
down_revision = "registry_0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    execute_script("alter table agents add column autonomy_guard boolean not null default false;")
