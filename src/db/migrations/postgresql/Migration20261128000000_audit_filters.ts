import { Migration } from '@mikro-orm/migrations';

/** The admin console's audit log filters by user (actor, impersonator or target), newest first within each. */
export class Migration20261128000000_audit_filters extends Migration {

  override async up(): Promise<void> {
    this.addSql(`create index "audit_events_actor_created_at_index" on "audit_events" ("actor_id", "created_at");`);
    this.addSql(`create index "audit_events_impersonator_created_at_index" on "audit_events" ("impersonator_id", "created_at");`);
    this.addSql(`create index "audit_events_target_created_at_index" on "audit_events" ("target_id", "created_at");`);
  }

}
