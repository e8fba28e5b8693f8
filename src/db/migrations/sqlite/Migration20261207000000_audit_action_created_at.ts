import { Migration } from '@mikro-orm/migrations';

/** The dashboard's figures (src/db/dashboard.ts): audit events by action within a time window; users with two-factor on. */
export class Migration20261207000000_audit_action_created_at extends Migration {

  override async up(): Promise<void> {
    this.addSql(`create index \`audit_events_action_created_at_index\` on \`audit_events\` (\`action\`, \`created_at\`);`);
    this.addSql(`create index \`users_two_factor_enabled_index\` on \`users\` (\`two_factor_enabled\`);`);
  }

}
