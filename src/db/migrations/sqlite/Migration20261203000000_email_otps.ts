import { Migration } from '@mikro-orm/migrations';

/** The live one-time codes of email-otp, one per address and type (src/db/entities/email-otp.ts). */
export class Migration20261203000000_email_otps extends Migration {

  override async up(): Promise<void> {
    this.addSql(`create table \`email_otps\` (\`id\` text not null, \`address_digest\` text not null, \`type\` text not null, \`code_digest\` text not null, \`attempts\` integer not null default 0, \`expires_at\` datetime not null, \`created_at\` datetime not null, primary key (\`id\`));`);
    this.addSql(`create index \`email_otps_expires_at_index\` on \`email_otps\` (\`expires_at\`);`);
    this.addSql(`create unique index \`email_otps_address_type_unique\` on \`email_otps\` (\`address_digest\`, \`type\`);`);
  }

}
