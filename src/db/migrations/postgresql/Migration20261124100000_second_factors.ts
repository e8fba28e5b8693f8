import { Migration } from '@mikro-orm/migrations';

export class Migration20261124100000_second_factors extends Migration {

  override async up(): Promise<void> {
    this.addSql(`create table "two_factor_challenges" ("id" uuid not null, "token_hash" varchar(64) not null, "kind" varchar(16) not null, "user_id" uuid not null, "remember_me" boolean not null default true, "attempts" int not null default 0, "otp_hash" varchar(64) null, "otp_expires_at" timestamptz null, "expires_at" timestamptz not null, "created_at" timestamptz not null, constraint "two_factor_challenges_pkey" primary key ("id"));`);
    this.addSql(`alter table "two_factor_challenges" add constraint "two_factor_challenges_token_hash_unique" unique ("token_hash");`);
    this.addSql(`create index "two_factor_challenges_user_id_index" on "two_factor_challenges" ("user_id");`);
    this.addSql(`create index "two_factor_challenges_expires_at_index" on "two_factor_challenges" ("expires_at");`);

    this.addSql(`create table "two_factor_backup_codes" ("id" uuid not null, "user_id" uuid not null, "code_hash" varchar(64) not null, "created_at" timestamptz not null, constraint "two_factor_backup_codes_pkey" primary key ("id"));`);
    this.addSql(`create index "two_factor_backup_codes_user_id_index" on "two_factor_backup_codes" ("user_id");`);
    this.addSql(`alter table "two_factor_backup_codes" add constraint "two_factor_backup_codes_code_hash_unique" unique ("code_hash");`);

    this.addSql(`create table "two_factors" ("id" uuid not null, "user_id" uuid not null, "secret" text not null, "verified" boolean not null default false, "last_totp_step" bigint null, "failed_count" int not null default 0, "locked_until" timestamptz null, "created_at" timestamptz not null, "updated_at" timestamptz not null, constraint "two_factors_pkey" primary key ("id"));`);
    this.addSql(`alter table "two_factors" add constraint "two_factors_user_id_unique" unique ("user_id");`);

    this.addSql(`create table "passkeys" ("id" uuid not null, "name" varchar(255) null, "user_id" uuid not null, "credential_id" varchar(1400) not null, "public_key" text not null, "counter" bigint not null default 0, "device_type" varchar(32) not null, "backed_up" boolean not null default false, "transports" varchar(255) null, "aaguid" varchar(64) null, "created_at" timestamptz not null, constraint "passkeys_pkey" primary key ("id"));`);
    this.addSql(`create index "passkeys_user_id_index" on "passkeys" ("user_id");`);
    this.addSql(`alter table "passkeys" add constraint "passkeys_credential_id_unique" unique ("credential_id");`);

    this.addSql(`alter table "two_factor_challenges" add constraint "two_factor_challenges_user_id_foreign" foreign key ("user_id") references "users" ("id") on update cascade on delete cascade;`);

    this.addSql(`alter table "two_factor_backup_codes" add constraint "two_factor_backup_codes_user_id_foreign" foreign key ("user_id") references "users" ("id") on update cascade on delete cascade;`);

    this.addSql(`alter table "two_factors" add constraint "two_factors_user_id_foreign" foreign key ("user_id") references "users" ("id") on update cascade on delete cascade;`);

    this.addSql(`alter table "passkeys" add constraint "passkeys_user_id_foreign" foreign key ("user_id") references "users" ("id") on update cascade on delete cascade;`);

    this.addSql(`alter table "users" add column "two_factor_enabled" boolean not null default false;`);
  }

}
