import { Migration } from '@mikro-orm/migrations';

export class Migration20261122000000_initial extends Migration {

  override async up(): Promise<void> {
    this.addSql(`create table \`users\` (\`id\` text not null, \`email\` text not null, \`email_verified\` integer not null default false, \`name\` text not null, \`image\` text null, \`username\` text null, \`display_username\` text null, \`role\` text not null default 'user', \`banned\` integer not null default false, \`ban_reason\` text null, \`ban_expires\` datetime null, \`created_at\` datetime not null, \`updated_at\` datetime not null, primary key (\`id\`));`);
    this.addSql(`create unique index \`users_email_unique\` on \`users\` (\`email\`);`);
    this.addSql(`create unique index \`users_username_unique\` on \`users\` (\`username\`);`);

    this.addSql(`create table \`sessions\` (\`id\` text not null, \`token_hash\` text not null, \`user_id\` text not null, \`expires_at\` datetime not null, \`remember_me\` integer not null default true, \`ip_address\` text null, \`user_agent\` text null, \`impersonated_by\` text null, \`created_at\` datetime not null, \`updated_at\` datetime not null, constraint \`sessions_user_id_foreign\` foreign key(\`user_id\`) references \`users\`(\`id\`) on delete cascade on update cascade, primary key (\`id\`));`);
    this.addSql(`create unique index \`sessions_token_hash_unique\` on \`sessions\` (\`token_hash\`);`);
    this.addSql(`create index \`sessions_user_id_index\` on \`sessions\` (\`user_id\`);`);
    this.addSql(`create index \`sessions_expires_at_index\` on \`sessions\` (\`expires_at\`);`);

    this.addSql(`create table \`accounts\` (\`id\` text not null, \`user_id\` text not null, \`provider_id\` text not null, \`account_id\` text not null, \`password\` text null, \`access_token\` text null, \`refresh_token\` text null, \`id_token\` text null, \`access_token_expires_at\` datetime null, \`refresh_token_expires_at\` datetime null, \`scope\` text null, \`created_at\` datetime not null, \`updated_at\` datetime not null, constraint \`accounts_user_id_foreign\` foreign key(\`user_id\`) references \`users\`(\`id\`) on delete cascade on update cascade, primary key (\`id\`));`);
    this.addSql(`create index \`accounts_user_id_index\` on \`accounts\` (\`user_id\`);`);
    this.addSql(`create unique index \`accounts_provider_account_unique\` on \`accounts\` (\`provider_id\`, \`account_id\`);`);

    this.addSql(`create table \`verifications\` (\`id\` text not null, \`identifier\` text not null, \`purpose\` text not null, \`value\` text not null, \`expires_at\` datetime not null, \`created_at\` datetime not null, primary key (\`id\`));`);
    this.addSql(`create unique index \`verifications_identifier_unique\` on \`verifications\` (\`identifier\`);`);
    this.addSql(`create index \`verifications_expires_at_index\` on \`verifications\` (\`expires_at\`);`);
  }

}
