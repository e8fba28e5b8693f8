import { Migration } from '@mikro-orm/migrations';

export class Migration20261124100000_second_factors extends Migration {

  override async up(): Promise<void> {
    this.addSql(`create table \`two_factor_challenges\` (\`id\` text not null, \`token_hash\` text not null, \`kind\` text not null, \`user_id\` text not null, \`remember_me\` integer not null default true, \`attempts\` integer not null default 0, \`otp_hash\` text null, \`otp_expires_at\` datetime null, \`expires_at\` datetime not null, \`created_at\` datetime not null, constraint \`two_factor_challenges_user_id_foreign\` foreign key(\`user_id\`) references \`users\`(\`id\`) on delete cascade on update cascade, primary key (\`id\`));`);
    this.addSql(`create unique index \`two_factor_challenges_token_hash_unique\` on \`two_factor_challenges\` (\`token_hash\`);`);
    this.addSql(`create index \`two_factor_challenges_user_id_index\` on \`two_factor_challenges\` (\`user_id\`);`);
    this.addSql(`create index \`two_factor_challenges_expires_at_index\` on \`two_factor_challenges\` (\`expires_at\`);`);

    this.addSql(`create table \`two_factor_backup_codes\` (\`id\` text not null, \`user_id\` text not null, \`code_hash\` text not null, \`created_at\` datetime not null, constraint \`two_factor_backup_codes_user_id_foreign\` foreign key(\`user_id\`) references \`users\`(\`id\`) on delete cascade on update cascade, primary key (\`id\`));`);
    this.addSql(`create index \`two_factor_backup_codes_user_id_index\` on \`two_factor_backup_codes\` (\`user_id\`);`);
    this.addSql(`create unique index \`two_factor_backup_codes_code_hash_unique\` on \`two_factor_backup_codes\` (\`code_hash\`);`);

    this.addSql(`create table \`two_factors\` (\`id\` text not null, \`user_id\` text not null, \`secret\` text not null, \`verified\` integer not null default false, \`last_totp_step\` bigint null, \`failed_count\` integer not null default 0, \`locked_until\` datetime null, \`created_at\` datetime not null, \`updated_at\` datetime not null, constraint \`two_factors_user_id_foreign\` foreign key(\`user_id\`) references \`users\`(\`id\`) on delete cascade on update cascade, primary key (\`id\`));`);
    this.addSql(`create index \`two_factors_user_id_index\` on \`two_factors\` (\`user_id\`);`);
    this.addSql(`create unique index \`two_factors_user_id_unique\` on \`two_factors\` (\`user_id\`);`);

    this.addSql(`create table \`passkeys\` (\`id\` text not null, \`name\` text null, \`user_id\` text not null, \`credential_id\` text not null, \`public_key\` text not null, \`counter\` bigint not null default 0, \`device_type\` text not null, \`backed_up\` integer not null default false, \`transports\` text null, \`aaguid\` text null, \`created_at\` datetime not null, constraint \`passkeys_user_id_foreign\` foreign key(\`user_id\`) references \`users\`(\`id\`) on delete cascade on update cascade, primary key (\`id\`));`);
    this.addSql(`create index \`passkeys_user_id_index\` on \`passkeys\` (\`user_id\`);`);
    this.addSql(`create unique index \`passkeys_credential_id_unique\` on \`passkeys\` (\`credential_id\`);`);

    this.addSql(`alter table \`users\` add column \`two_factor_enabled\` integer not null default false;`);
  }

}
