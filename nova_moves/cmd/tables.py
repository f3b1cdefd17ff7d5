"""The one way nova-moves-manage prints a table: prettytable, as
oslo.upgradecheck's ``status check`` (and the openstack client) do."""
import prettytable


def render(headers, rows):
    table = prettytable.PrettyTable(list(headers))
    table.align = 'l'
    for row in rows:
        table.add_row(['' if cell is None else cell for cell in row])
    return table.get_string()
