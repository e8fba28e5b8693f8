import { Migration } from '@mikro-orm/migrations';

/** Portcullis as an OpenID provider: clients, codes, access and refresh tokens, consents (src/db/entities/oauth-provider.ts). */
export class Migration20261206000000_oidc_provider extends Migration {

  override async up(): Promise<void> {
    this.addSql(`create table "oauth_refresh_tokens" ("id" uuid not null, "token_hash" varchar(64) not null, "client_id" varchar(64) not null, "user_id" uuid not null, "session_id" uuid null, "grant_id" uuid not null, "scopes" text not null, "resource" text null, "auth_time" timestamptz not null, "expires_at" timestamptz not null, "used_at" timestamptz null, "revoked_at" timestamptz null, "created_at" timestamptz not null, constraint "oauth_refresh_tokens_pkey" primary key ("id"));`);
    this.addSql(`alter table "oauth_refresh_tokens" add constraint "oauth_refresh_tokens_token_hash_unique" unique ("token_hash");`);
    this.addSql(`create index "oauth_refresh_tokens_user_id_index" on "oauth_refresh_tokens" ("user_id");`);
    this.addSql(`create index "oauth_refresh_tokens_grant_id_index" on "oauth_refresh_tokens" ("grant_id");`);
    this.addSql(`create index "oauth_refresh_tokens_expires_at_index" on "oauth_refresh_tokens" ("expires_at");`);
    this.addSql(`create table "oauth_consents" ("id" uuid not null, "client_id" varchar(64) not null, "user_id" uuid not null, "scopes" text not null, "reference_id" varchar(255) null, "created_at" timestamptz not null, "updated_at" timestamptz not null, constraint "oauth_consents_pkey" primary key ("id"));`);
    this.addSql(`create index "oauth_consents_client_id_index" on "oauth_consents" ("client_id");`);
    this.addSql(`alter table "oauth_consents" add constraint "oauth_consents_user_client_unique" unique ("user_id", "client_id");`);
    this.addSql(`create table "oauth_codes" ("id" uuid not null, "code_hash" varchar(64) not null, "client_id" varchar(64) not null, "user_id" uuid not null, "session_id" uuid not null, "redirect_uri" text not null, "code_challenge" varchar(128) not null, "scopes" text not null, "nonce" text null, "resource" text null, "claims" text null, "auth_time" timestamptz not null, "expires_at" timestamptz not null, "used_at" timestamptz null, "created_at" timestamptz not null, constraint "oauth_codes_pkey" primary key ("id"));`);
    this.addSql(`alter table "oauth_codes" add constraint "oauth_codes_code_hash_unique" unique ("code_hash");`);
    this.addSql(`create index "oauth_codes_user_id_index" on "oauth_codes" ("user_id");`);
    this.addSql(`create index "oauth_codes_expires_at_index" on "oauth_codes" ("expires_at");`);
    this.addSql(`create table "oauth_clients" ("id" uuid not null, "client_id" varchar(64) not null, "secret_hash" varchar(64) null, "secret_expires_at" timestamptz null, "auth_method" varchar(32) not null, "name" varchar(255) null, "uri" text null, "logo_uri" text null, "redirect_uris" text not null, "post_logout_redirect_uris" text null, "grant_types" text not null, "scopes" text null, "contacts" text null, "tos_uri" text null, "policy_uri" text null, "type" varchar(32) null, "software_id" varchar(255) null, "software_version" varchar(255) null, "metadata" text null, "skip_consent" boolean not null default false, "disabled" boolean not null default false, "user_id" uuid null, "reference_id" varchar(255) null, "created_at" timestamptz not null, "updated_at" timestamptz not null, constraint "oauth_clients_pkey" primary key ("id"));`);
    this.addSql(`alter table "oauth_clients" add constraint "oauth_clients_client_id_unique" unique ("client_id");`);
    this.addSql(`create index "oauth_clients_user_id_index" on "oauth_clients" ("user_id");`);
    this.addSql(`create table "oauth_access_tokens" ("id" uuid not null, "token_hash" varchar(64) not null, "client_id" varchar(64) not null, "user_id" uuid null, "session_id" uuid null, "grant_id" uuid null, "scopes" text not null, "resource" text null, "expires_at" timestamptz not null, "revoked_at" timestamptz null, "created_at" timestamptz not null, constraint "oauth_access_tokens_pkey" primary key ("id"));`);
    this.addSql(`alter table "oauth_access_tokens" add constraint "oauth_access_tokens_token_hash_unique" unique ("token_hash");`);
    this.addSql(`create index "oauth_access_tokens_client_id_index" on "oauth_access_tokens" ("client_id");`);
    this.addSql(`create index "oauth_access_tokens_user_id_index" on "oauth_access_tokens" ("user_id");`);
    this.addSql(`create index "oauth_access_tokens_grant_id_index" on "oauth_access_tokens" ("grant_id");`);
    this.addSql(`create index "oauth_access_tokens_expires_at_index" on "oauth_access_tokens" ("expires_at");`);
    this.addSql(`alter table "oauth_refresh_tokens" add constraint "oauth_refresh_tokens_user_id_foreign" foreign key ("user_id") references "users" ("id") on update cascade on delete cascade;`);
    this.addSql(`alter table "oauth_consents" add constraint "oauth_consents_user_id_foreign" foreign key ("user_id") references "users" ("id") on update cascade on delete cascade;`);
    this.addSql(`alter table "oauth_codes" add constraint "oauth_codes_user_id_foreign" foreign key ("user_id") references "users" ("id") on update cascade on delete cascade;`);
    this.addSql(`alter table "oauth_clients" add constraint "oauth_clients_user_id_foreign" foreign key ("user_id") references "users" ("id") on update cascade on delete cascade;`);
    this.addSql(`alter table "oauth_access_tokens" add constraint "oauth_access_tokens_user_id_foreign" foreign key ("user_id") references "users" ("id") on update cascade on delete cascade;`);
  }

}
