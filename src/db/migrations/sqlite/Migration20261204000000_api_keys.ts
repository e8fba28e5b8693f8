import { Migration } from '@mikro-orm/migrations';

/** API keys (src/db/entities/api-key.ts). */
export class Migration20261204000000_api_keys extends Migration {

  override async up(): Promise<void> {
    this.addSql(`create table \`api_keys\` (\`id\` text not null, \`config_id\` text not null default 'default', \`name\` text null, \`start\` text null, \`prefix\` text null, \`key_hash\` text not null, \`user_id\` text not null, \`enabled\` integer not null default true, \`rate_limit_enabled\` integer not null default true, \`rate_limit_time_window\` bigint null, \`rate_limit_max\` integer null, \`request_count\` integer not null default 0, \`remaining\` integer null, \`refill_amount\` integer null, \`refill_interval\` bigint null, \`last_refill_at\` datetime null, \`last_request\` datetime null, \`expires_at\` datetime null, \`metadata\` text null, \`permissions\` text null, \`created_at\` datetime not null, \`updated_at\` datetime not null, constraint \`api_keys_user_id_foreign\` foreign key(\`user_id\`) references \`users\`(\`id\`) on delete cascade on update cascade, primary key (\`id\`));`);
    this.addSql(`create unique index \`api_keys_key_hash_unique\` on \`api_keys\` (\`key_hash\`);`);
    this.addSql(`create index \`api_keys_user_id_index\` on \`api_keys\` (\`user_id\`);`);
  }

}
