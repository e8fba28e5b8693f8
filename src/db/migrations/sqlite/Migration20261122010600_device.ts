import { Migration } from '@mikro-orm/migrations';

export class Migration20261122010600_device extends Migration {

  override async up(): Promise<void> {
    this.addSql(`create table \`device_codes\` (\`id\` text not null, \`device_code_hash\` text not null, \`user_code\` text not null, \`client_id\` text not null, \`scope\` text null, \`status\` text not null, \`user_id\` text null, \`interval_sec\` integer not null, \`last_polled_at\` datetime null, \`expires_at\` datetime not null, \`created_at\` datetime not null, constraint \`device_codes_user_id_foreign\` foreign key(\`user_id\`) references \`users\`(\`id\`) on delete cascade on update cascade, primary key (\`id\`));`);
    this.addSql(`create unique index \`device_codes_device_code_hash_unique\` on \`device_codes\` (\`device_code_hash\`);`);
    this.addSql(`create unique index \`device_codes_user_code_unique\` on \`device_codes\` (\`user_code\`);`);
    this.addSql(`create index \`device_codes_user_id_index\` on \`device_codes\` (\`user_id\`);`);
    this.addSql(`create index \`device_codes_expires_at_index\` on \`device_codes\` (\`expires_at\`);`);
  }

}
