"""Registry tables: agents, tools, skills, their links, surfaces and the audit trail."""

from services.common.migrations import execute_script

revision = "registry_0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    execute_script(
        """
        create table agents (
            id text primary key,
            name text not null,
            class_ref text not null default '',
            runtime text not null check (runtime in ('engine', 'console')),
            purpose text not null default '',
            wake_on text not null default '',
            status text not null check (status in ('live', 'partial', 'simulation', 'broken', 'unmerged', 'retired')),
            status_note text not null default '',
            has_autonomy_gate boolean not null default false,
            autonomous boolean not null default false,
            model text,
            writes_to text not null default '',
            created_at timestamptz not null default now(),
            updated_at timestamptz not null default now(),
            check (autonomous = false or has_autonomy_gate)
        );
        create table tools (
            name text primary key,
            description text not null default '',
            kind text not null check (kind in ('read', 'write', 'notify', 'event')),
            target text not null default '',
            input_schema jsonb not null default '{}'::jsonb,
            implemented_at text not null default '',
            executor text not null default 'engine',
            base_url_key text,
            http_path text,
            owner_agents text[] not null default '{}',
            created_at timestamptz not null default now(),
            updated_at timestamptz not null default now()
        );
        create table skills (
            id text primary key,
            agent_id text not null references agents(id),
            title text not null,
            category text not null default '',
            description text not null default '',
            sample_prompt text not null default '',
            source text not null check (source in ('engine', 'console', 'custom')),
            enabled boolean not null,
            disabled_reason text,
            thresholds jsonb not null default '{}'::jsonb,
            thresholds_schema jsonb not null default '{}'::jsonb,
            version integer not null default 1 check (version >= 1),
            updated_by text not null default '',
            created_at timestamptz not null default now(),
            updated_at timestamptz not null default now(),
            check (enabled = false or disabled_reason is null)
        );
        create index skills_agent on skills (agent_id);
        create table skill_tools (
            skill_id text not null references skills(id) on delete cascade,
            tool_name text not null references tools(name),
            -- The order the skill lists its tools in, kept for display.
            position integer not null default 0,
            primary key (skill_id, tool_name)
        );
        create table surfaces (
            id text primary key,
            name text not null,
            path text,
            description text not null default '',
            agent_ids text[] not null default '{}'
        );
        create table audit (
            id bigserial primary key,
            entity text not null check (entity in ('agent', 'skill')),
            entity_id text not null,
            field text not null check (field <> ''),
            old jsonb,
            new jsonb,
            changed_by text not null check (changed_by <> ''),
            changed_by_email text not null default '',
            changed_at timestamptz not null default now()
        );
        create index audit_entity on audit (entity, entity_id, id desc);
        """
    )
