import { Migration } from '@mikro-orm/migrations';

export class Migration20261122011500_audit extends Migration {

  override async up(): Promise<void> {
    this.addSql(`create table "audit_events" ("id" uuid not null, "actor_id" uuid null, "impersonator_id" uuid null, "action" varchar(64) not null, "target_type" varchar(32) not null, "target_id" varchar(64) null, "ip" varchar(64) null, "user_agent" text null, "metadata" text null, "created_at" timestamptz not null, constraint "audit_events_pkey" primary key ("id"));`);
    this.addSql(`create index "audit_events_created_at_index" on "audit_events" ("created_at");`);
  }

}
