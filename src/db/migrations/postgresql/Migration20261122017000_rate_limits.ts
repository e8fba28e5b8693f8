import { Migration } from '@mikro-orm/migrations';

export class Migration20261122017000_rate_limits extends Migration {

  override async up(): Promise<void> {
    this.addSql(`create table "rate_limits" ("key" varchar(255) not null, "points" int not null default 0, "expire" bigint null, constraint "rate_limits_pkey" primary key ("key"));`);
    this.addSql(`create index "rate_limits_expire_index" on "rate_limits" ("expire");`);
  }

}
