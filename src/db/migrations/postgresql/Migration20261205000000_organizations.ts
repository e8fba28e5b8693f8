import { Migration } from '@mikro-orm/migrations';

/** Organizations, members, invitations, teams and dynamic roles; the session's active organization and team (src/db/entities/organization.ts, docs/organizations.md). */
export class Migration20261205000000_organizations extends Migration {

  override async up(): Promise<void> {
    this.addSql(`create table "organizations" ("id" uuid not null, "name" varchar(255) not null, "slug" varchar(255) not null, "logo" text null, "metadata" text null, "created_at" timestamptz not null, constraint "organizations_pkey" primary key ("id"));`);
    this.addSql(`alter table "organizations" add constraint "organizations_slug_unique" unique ("slug");`);
    this.addSql(`create table "invitations" ("id" varchar(64) not null, "organization_id" uuid not null, "email" varchar(320) not null, "role" varchar(255) not null, "team_id" uuid null, "status" varchar(16) not null, "inviter_id" uuid not null, "expires_at" timestamptz not null, "created_at" timestamptz not null, constraint "invitations_pkey" primary key ("id"));`);
    this.addSql(`create index "invitations_organization_status_index" on "invitations" ("organization_id", "status");`);
    this.addSql(`create index "invitations_email_status_index" on "invitations" ("email", "status");`);
    this.addSql(`create table "organization_roles" ("id" uuid not null, "organization_id" uuid not null, "role" varchar(255) not null, "permission" text not null, "created_at" timestamptz not null, "updated_at" timestamptz null, constraint "organization_roles_pkey" primary key ("id"));`);
    this.addSql(`alter table "organization_roles" add constraint "organization_roles_organization_role_unique" unique ("organization_id", "role");`);
    this.addSql(`create table "teams" ("id" uuid not null, "organization_id" uuid not null, "name" varchar(255) not null, "created_at" timestamptz not null, "updated_at" timestamptz null, constraint "teams_pkey" primary key ("id"));`);
    this.addSql(`create index "teams_organization_id_index" on "teams" ("organization_id");`);
    this.addSql(`create table "team_members" ("id" uuid not null, "team_id" uuid not null, "user_id" uuid not null, "created_at" timestamptz not null, constraint "team_members_pkey" primary key ("id"));`);
    this.addSql(`create index "team_members_user_id_index" on "team_members" ("user_id");`);
    this.addSql(`alter table "team_members" add constraint "team_members_team_user_unique" unique ("team_id", "user_id");`);
    this.addSql(`create table "members" ("id" uuid not null, "organization_id" uuid not null, "user_id" uuid not null, "role" varchar(255) not null, "created_at" timestamptz not null, constraint "members_pkey" primary key ("id"));`);
    this.addSql(`create index "members_user_id_index" on "members" ("user_id");`);
    this.addSql(`create index "members_organization_created_at_id_index" on "members" ("organization_id", "created_at", "id");`);
    this.addSql(`create index "members_organization_role_id_index" on "members" ("organization_id", "role", "id");`);
    this.addSql(`alter table "members" add constraint "members_organization_user_unique" unique ("organization_id", "user_id");`);
    this.addSql(`alter table "invitations" add constraint "invitations_organization_id_foreign" foreign key ("organization_id") references "organizations" ("id") on update cascade on delete cascade;`);
    this.addSql(`alter table "organization_roles" add constraint "organization_roles_organization_id_foreign" foreign key ("organization_id") references "organizations" ("id") on update cascade on delete cascade;`);
    this.addSql(`alter table "teams" add constraint "teams_organization_id_foreign" foreign key ("organization_id") references "organizations" ("id") on update cascade on delete cascade;`);
    this.addSql(`alter table "team_members" add constraint "team_members_team_id_foreign" foreign key ("team_id") references "teams" ("id") on update cascade on delete cascade;`);
    this.addSql(`alter table "team_members" add constraint "team_members_user_id_foreign" foreign key ("user_id") references "users" ("id") on update cascade on delete cascade;`);
    this.addSql(`alter table "members" add constraint "members_organization_id_foreign" foreign key ("organization_id") references "organizations" ("id") on update cascade on delete cascade;`);
    this.addSql(`alter table "members" add constraint "members_user_id_foreign" foreign key ("user_id") references "users" ("id") on update cascade on delete cascade;`);
    this.addSql(`alter table "sessions" add column "active_organization_id" uuid null, add column "active_team_id" uuid null;`);
    this.addSql(`create index "sessions_active_organization_id_index" on "sessions" ("active_organization_id");`);
  }

}
