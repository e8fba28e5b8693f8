import { Migration } from '@mikro-orm/migrations';

/** JWT signing keys (src/db/entities/jwks-key.ts). */
export class Migration20261201100000_jwks extends Migration {

  override async up(): Promise<void> {
    this.addSql(`create table "jwks_keys" ("id" varchar(64) not null, "epoch" int not null, "alg" varchar(16) not null, "public_key" text not null, "private_key" text not null, "created_at" timestamptz not null, "signs_until" timestamptz not null, constraint "jwks_keys_pkey" primary key ("id"));`);
    this.addSql(`alter table "jwks_keys" add constraint "jwks_keys_epoch_unique" unique ("epoch");`);
  }

}
