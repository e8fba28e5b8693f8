import { Migration } from '@mikro-orm/migrations';

/** API keys (src/db/entities/api-key.ts). */
export class Migration20261204000000_api_keys extends Migration {

  override async up(): Promise<void> {
    this.addSql(`create table "api_keys" ("id" uuid not null, "config_id" varchar(64) not null default 'default', "name" varchar(255) null, "start" varchar(64) null, "prefix" varchar(64) null, "key_hash" varchar(64) not null, "user_id" uuid not null, "enabled" boolean not null default true, "rate_limit_enabled" boolean not null default true, "rate_limit_time_window" bigint null, "rate_limit_max" int null, "request_count" int not null default 0, "remaining" int null, "refill_amount" int null, "refill_interval" bigint null, "last_refill_at" timestamptz null, "last_request" timestamptz null, "expires_at" timestamptz null, "metadata" text null, "permissions" text null, "created_at" timestamptz not null, "updated_at" timestamptz not null, constraint "api_keys_pkey" primary key ("id"));`);
    this.addSql(`alter table "api_keys" add constraint "api_keys_key_hash_unique" unique ("key_hash");`);
    this.addSql(`create index "api_keys_user_id_index" on "api_keys" ("user_id");`);
    this.addSql(`alter table "api_keys" add constraint "api_keys_user_id_foreign" foreign key ("user_id") references "users" ("id") on update cascade on delete cascade;`);
  }

}
