import { Migration } from '@mikro-orm/migrations';

/** The live one-time codes of email-otp, one per address and type (src/db/entities/email-otp.ts). */
export class Migration20261203000000_email_otps extends Migration {

  override async up(): Promise<void> {
    this.addSql(`create table "email_otps" ("id" uuid not null, "address_digest" varchar(64) not null, "type" varchar(32) not null, "code_digest" varchar(64) not null, "attempts" int not null default 0, "expires_at" timestamptz not null, "created_at" timestamptz not null, constraint "email_otps_pkey" primary key ("id"));`);
    this.addSql(`create index "email_otps_expires_at_index" on "email_otps" ("expires_at");`);
    this.addSql(`alter table "email_otps" add constraint "email_otps_address_type_unique" unique ("address_digest", "type");`);
  }

}
