import { Migration } from '@mikro-orm/migrations';

export class Migration20261122011500_audit extends Migration {

  override async up(): Promise<void> {
    this.addSql(`create table \`audit_events\` (\`id\` text not null, \`actor_id\` text null, \`impersonator_id\` text null, \`action\` text not null, \`target_type\` text not null, \`target_id\` text null, \`ip\` text null, \`user_agent\` text null, \`metadata\` text null, \`created_at\` datetime not null, primary key (\`id\`));`);
    this.addSql(`create index \`audit_events_created_at_index\` on \`audit_events\` (\`created_at\`);`);
  }

}
