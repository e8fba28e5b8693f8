import { Migration } from '@mikro-orm/migrations';

/** Portcullis as an OpenID provider: clients, codes, access and refresh tokens, consents (src/db/entities/oauth-provider.ts). */
export class Migration20261206000000_oidc_provider extends Migration {

  override async up(): Promise<void> {
    this.addSql(`create table \`oauth_refresh_tokens\` (\`id\` text not null, \`token_hash\` text not null, \`client_id\` text not null, \`user_id\` text not null, \`session_id\` text null, \`grant_id\` text not null, \`scopes\` text not null, \`resource\` text null, \`auth_time\` datetime not null, \`expires_at\` datetime not null, \`used_at\` datetime null, \`revoked_at\` datetime null, \`created_at\` datetime not null, constraint \`oauth_refresh_tokens_user_id_foreign\` foreign key(\`user_id\`) references \`users\`(\`id\`) on delete cascade on update cascade, primary key (\`id\`));`);
    this.addSql(`create unique index \`oauth_refresh_tokens_token_hash_unique\` on \`oauth_refresh_tokens\` (\`token_hash\`);`);
    this.addSql(`create index \`oauth_refresh_tokens_user_id_index\` on \`oauth_refresh_tokens\` (\`user_id\`);`);
    this.addSql(`create index \`oauth_refresh_tokens_grant_id_index\` on \`oauth_refresh_tokens\` (\`grant_id\`);`);
    this.addSql(`create index \`oauth_refresh_tokens_expires_at_index\` on \`oauth_refresh_tokens\` (\`expires_at\`);`);
    this.addSql(`create table \`oauth_consents\` (\`id\` text not null, \`client_id\` text not null, \`user_id\` text not null, \`scopes\` text not null, \`reference_id\` text null, \`created_at\` datetime not null, \`updated_at\` datetime not null, constraint \`oauth_consents_user_id_foreign\` foreign key(\`user_id\`) references \`users\`(\`id\`) on delete cascade on update cascade, primary key (\`id\`));`);
    this.addSql(`create index \`oauth_consents_client_id_index\` on \`oauth_consents\` (\`client_id\`);`);
    this.addSql(`create index \`oauth_consents_user_id_index\` on \`oauth_consents\` (\`user_id\`);`);
    this.addSql(`create unique index \`oauth_consents_user_client_unique\` on \`oauth_consents\` (\`user_id\`, \`client_id\`);`);
    this.addSql(`create table \`oauth_codes\` (\`id\` text not null, \`code_hash\` text not null, \`client_id\` text not null, \`user_id\` text not null, \`session_id\` text not null, \`redirect_uri\` text not null, \`code_challenge\` text not null, \`scopes\` text not null, \`nonce\` text null, \`resource\` text null, \`claims\` text null, \`auth_time\` datetime not null, \`expires_at\` datetime not null, \`used_at\` datetime null, \`created_at\` datetime not null, constraint \`oauth_codes_user_id_foreign\` foreign key(\`user_id\`) references \`users\`(\`id\`) on delete cascade on update cascade, primary key (\`id\`));`);
    this.addSql(`create unique index \`oauth_codes_code_hash_unique\` on \`oauth_codes\` (\`code_hash\`);`);
    this.addSql(`create index \`oauth_codes_user_id_index\` on \`oauth_codes\` (\`user_id\`);`);
    this.addSql(`create index \`oauth_codes_expires_at_index\` on \`oauth_codes\` (\`expires_at\`);`);
    this.addSql(`create table \`oauth_clients\` (\`id\` text not null, \`client_id\` text not null, \`secret_hash\` text null, \`secret_expires_at\` datetime null, \`auth_method\` text not null, \`name\` text null, \`uri\` text null, \`logo_uri\` text null, \`redirect_uris\` text not null, \`post_logout_redirect_uris\` text null, \`grant_types\` text not null, \`scopes\` text null, \`contacts\` text null, \`tos_uri\` text null, \`policy_uri\` text null, \`type\` text null, \`software_id\` text null, \`software_version\` text null, \`metadata\` text null, \`skip_consent\` integer not null default false, \`disabled\` integer not null default false, \`user_id\` text null, \`reference_id\` text null, \`created_at\` datetime not null, \`updated_at\` datetime not null, constraint \`oauth_clients_user_id_foreign\` foreign key(\`user_id\`) references \`users\`(\`id\`) on delete cascade on update cascade, primary key (\`id\`));`);
    this.addSql(`create unique index \`oauth_clients_client_id_unique\` on \`oauth_clients\` (\`client_id\`);`);
    this.addSql(`create index \`oauth_clients_user_id_index\` on \`oauth_clients\` (\`user_id\`);`);
    this.addSql(`create table \`oauth_access_tokens\` (\`id\` text not null, \`token_hash\` text not null, \`client_id\` text not null, \`user_id\` text null, \`session_id\` text null, \`grant_id\` text null, \`scopes\` text not null, \`resource\` text null, \`expires_at\` datetime not null, \`revoked_at\` datetime null, \`created_at\` datetime not null, constraint \`oauth_access_tokens_user_id_foreign\` foreign key(\`user_id\`) references \`users\`(\`id\`) on delete cascade on update cascade, primary key (\`id\`));`);
    this.addSql(`create unique index \`oauth_access_tokens_token_hash_unique\` on \`oauth_access_tokens\` (\`token_hash\`);`);
    this.addSql(`create index \`oauth_access_tokens_client_id_index\` on \`oauth_access_tokens\` (\`client_id\`);`);
    this.addSql(`create index \`oauth_access_tokens_user_id_index\` on \`oauth_access_tokens\` (\`user_id\`);`);
    this.addSql(`create index \`oauth_access_tokens_grant_id_index\` on \`oauth_access_tokens\` (\`grant_id\`);`);
    this.addSql(`create index \`oauth_access_tokens_expires_at_index\` on \`oauth_access_tokens\` (\`expires_at\`);`);
  }

}
