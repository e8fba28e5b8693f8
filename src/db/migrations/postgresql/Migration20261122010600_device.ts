import { Migration } from '@mikro-orm/migrations';

export class Migration20261122010600_device extends Migration {

  override async up(): Promise<void> {
    this.addSql(`create table "device_codes" ("id" uuid not null, "device_code_hash" varchar(64) not null, "user_code" varchar(8) not null, "client_id" varchar(255) not null, "scope" text null, "status" varchar(16) not null, "user_id" uuid null, "interval_sec" int not null, "last_polled_at" timestamptz null, "expires_at" timestamptz not null, "created_at" timestamptz not null, constraint "device_codes_pkey" primary key ("id"));`);
    this.addSql(`alter table "device_codes" add constraint "device_codes_device_code_hash_unique" unique ("device_code_hash");`);
    this.addSql(`alter table "device_codes" add constraint "device_codes_user_code_unique" unique ("user_code");`);
    this.addSql(`create index "device_codes_user_id_index" on "device_codes" ("user_id");`);
    this.addSql(`create index "device_codes_expires_at_index" on "device_codes" ("expires_at");`);

    this.addSql(`alter table "device_codes" add constraint "device_codes_user_id_foreign" foreign key ("user_id") references "users" ("id") on update cascade on delete cascade;`);
  }

}
