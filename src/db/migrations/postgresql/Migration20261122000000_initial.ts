import { Migration } from '@mikro-orm/migrations';

export class Migration20261122000000_initial extends Migration {

  override async up(): Promise<void> {
    this.addSql(`create table "users" ("id" uuid not null, "email" varchar(320) not null, "email_verified" boolean not null default false, "name" varchar(1024) not null, "image" text null, "username" varchar(64) null, "display_username" varchar(64) null, "role" varchar(255) not null default 'user', "banned" boolean not null default false, "ban_reason" text null, "ban_expires" timestamptz null, "created_at" timestamptz not null, "updated_at" timestamptz not null, constraint "users_pkey" primary key ("id"));`);
    this.addSql(`alter table "users" add constraint "users_email_unique" unique ("email");`);
    this.addSql(`alter table "users" add constraint "users_username_unique" unique ("username");`);

    this.addSql(`create table "sessions" ("id" uuid not null, "token_hash" varchar(64) not null, "user_id" uuid not null, "expires_at" timestamptz not null, "remember_me" boolean not null default true, "ip_address" varchar(64) null, "user_agent" text null, "impersonated_by" uuid null, "created_at" timestamptz not null, "updated_at" timestamptz not null, constraint "sessions_pkey" primary key ("id"));`);
    this.addSql(`alter table "sessions" add constraint "sessions_token_hash_unique" unique ("token_hash");`);
    this.addSql(`create index "sessions_user_id_index" on "sessions" ("user_id");`);
    this.addSql(`create index "sessions_expires_at_index" on "sessions" ("expires_at");`);

    this.addSql(`create table "accounts" ("id" uuid not null, "user_id" uuid not null, "provider_id" varchar(255) not null, "account_id" varchar(255) not null, "password" text null, "access_token" text null, "refresh_token" text null, "id_token" text null, "access_token_expires_at" timestamptz null, "refresh_token_expires_at" timestamptz null, "scope" text null, "created_at" timestamptz not null, "updated_at" timestamptz not null, constraint "accounts_pkey" primary key ("id"));`);
    this.addSql(`create index "accounts_user_id_index" on "accounts" ("user_id");`);
    this.addSql(`alter table "accounts" add constraint "accounts_provider_account_unique" unique ("provider_id", "account_id");`);

    this.addSql(`create table "verifications" ("id" uuid not null, "identifier" varchar(64) not null, "purpose" varchar(64) not null, "value" text not null, "expires_at" timestamptz not null, "created_at" timestamptz not null, constraint "verifications_pkey" primary key ("id"));`);
    this.addSql(`alter table "verifications" add constraint "verifications_identifier_unique" unique ("identifier");`);
    this.addSql(`create index "verifications_expires_at_index" on "verifications" ("expires_at");`);

    this.addSql(`alter table "sessions" add constraint "sessions_user_id_foreign" foreign key ("user_id") references "users" ("id") on update cascade on delete cascade;`);

    this.addSql(`alter table "accounts" add constraint "accounts_user_id_foreign" foreign key ("user_id") references "users" ("id") on update cascade on delete cascade;`);
  }

}
