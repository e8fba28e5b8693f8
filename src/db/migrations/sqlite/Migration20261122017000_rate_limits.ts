import { Migration } from '@mikro-orm/migrations';

export class Migration20261122017000_rate_limits extends Migration {

  override async up(): Promise<void> {
    this.addSql(`create table \`rate_limits\` (\`key\` text not null, \`points\` integer not null default 0, \`expire\` bigint null, primary key (\`key\`));`);
    this.addSql(`create index \`rate_limits_expire_index\` on \`rate_limits\` (\`expire\`);`);
  }

}
